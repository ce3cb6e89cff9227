# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for fgctl: verbs, each verb's options (read from its own
# --help, so they never drift), pids and comms for -p and --comm, and the
# output extensions fgctl knows for -o.

_fgctl_verbs="record snapshot top status render diff heatmap push help version"

# The long and short options a verb's --help lists.
_fgctl_options()
{
	fgctl "$1" --help 2>/dev/null |
		grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' |
		tr ',' '\n' | tr -d ' '
}

_fgctl()
{
	local cur prev verb i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	# The verb: the first word that is not a global option or its value.
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--socket | -s) ((i++)) ;;
		-*) ;;
		*)
			verb=${COMP_WORDS[i]}
			break
			;;
		esac
	done
	if [[ -z $verb ]]; then
		if [[ $prev == --socket || $prev == -s ]]; then
			COMPREPLY=($(compgen -f -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--socket --help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$_fgctl_verbs" -- "$cur"))
		fi
		return
	fi

	case $prev in
	-p | --pid)
		COMPREPLY=($(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur"))
		return
		;;
	--comm)
		COMPREPLY=($(compgen -W "$(ps -eo comm= 2>/dev/null | sort -u)" -- "$cur"))
		return
		;;
	-o | --output)
		# The extensions fgctl writes, and directories to walk into.
		COMPREPLY=($(compgen -d -- "$cur")
			$(compgen -f -X '!*.@(svg|html|folded|txt|timed|json|pprof|pb.gz)' -- "$cur"))
		return
		;;
	-f | --format)
		COMPREPLY=($(compgen -W "svg html folded timed pprof speedscope json" -- "$cur"))
		return
		;;
	--group-by)
		COMPREPLY=($(compgen -W "process cgroup cgroup-name" -- "$cur"))
		return
		;;
	--call-graph)
		COMPREPLY=($(compgen -W "fp dwarf" -- "$cur"))
		return
		;;
	--from)
		COMPREPLY=($(compgen -W "folded perf timed" -- "$cur"))
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_fgctl_options "$verb")" -- "$cur"))
		return
	fi
	case $verb in
	render | diff | heatmap) COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
}

complete -o filenames -F _fgctl fgctl
