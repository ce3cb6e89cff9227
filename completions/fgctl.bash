# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for fgctl: verbs, each verb's options (read from its own
# --help, so they never drift), pids and comms for -p and --comm, the formats
# each verb takes for -f and --from, and the output extensions fgctl knows
# for -o.

_fgctl_verbs="record snapshot top status render diff heatmap push help version"

# The long and short options a verb's --help lists. An option line starts with
# an option at the option column (a wrapped description starts further right)
# and may name several: "-p, --pid PIDS", "--since TIME, --until TIME",
# "--subtitle, --width, ..., --focus, ... render's graph". Its options end
# where the description starts: after two blanks, or at the first word that is
# neither an option, nor an option's argument (TIME, PX|PCT%), nor "...".
# _fgctl and fgctl.fish read option lines with the same program.
_fgctl_options()
{
	local opts
	opts=$(fgctl "$1" --help 2>/dev/null | awk '
		/^ +-/ && index($0, "-") <= 9 {
			if (match($0, /[^ ]  /))
				$0 = substr($0, 1, RSTART)
			for (i = 1; i <= NF; i++) {
				w = $i
				sub(/,$/, "", w)
				if (w ~ /^--?[a-zA-Z0-9]/) {
					sub(/[=[].*/, "", w)
					print w
				} else if (w !~ /^([A-Z[]|\.\.\.)/) {
					break
				}
			}
		}')
	# Where the help lists none, the options the verb is known to take.
	if [[ -z $opts ]]; then
		case $1 in
		status) opts=--json ;;
		esac
	fi
	printf '%s\n' "$opts"
}

# The -f values each verb takes, as its --help lists them; diff refuses pprof
# and speedscope (a differential profile has neither form), which the help it
# shares with render names.
_fgctl_formats()
{
	case $1 in
	record) echo svg html folded timed pprof speedscope ;;
	snapshot | render) echo svg html folded pprof speedscope ;;
	diff) echo svg html folded ;;
	heatmap) echo html json svg timed ;;
	push) echo pprof folded ;;
	esac
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
		--socket | -s)
			# Its value; bash splits --socket=PATH into three words.
			[[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
			((i++))
			;;
		-*) ;;
		*)
			verb=${COMP_WORDS[i]}
			break
			;;
		esac
	done
	if [[ -z $verb ]]; then
		if [[ $prev == --socket || $prev == -s ||
			($prev == = && ${COMP_WORDS[COMP_CWORD - 2]} == --socket) ]]; then
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
		# render's and diff's --pid is a flag (root frames 'comm-PID'), not a process.
		case $prev:$verb in
		--pid:render | --pid:diff) ;;
		*)
			# A pid, or a name: the pids of the processes whose comm begins with it.
			if [[ $cur == *[!0-9,]* ]]; then
				COMPREPLY=($(ps -eo pid=,comm= 2>/dev/null |
					awk -v c="$cur" 'index($2, c) == 1 { print $1 }'))
			else
				COMPREPLY=($(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur"))
			fi
			return
			;;
		esac
		;;
	--comm)
		COMPREPLY=($(compgen -W "$(ps -eo comm= 2>/dev/null | sort -u)" -- "$cur"))
		return
		;;
	-s | --socket)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	-o | --output)
		# The extensions fgctl writes, and directories to walk into.
		COMPREPLY=($(compgen -d -- "$cur")
			$(compgen -f -X '!*.@(svg|html|folded|txt|timed|json|pprof|pb.gz)' -- "$cur"))
		return
		;;
	-f | --format)
		COMPREPLY=($(compgen -W "$(_fgctl_formats "$verb")" -- "$cur"))
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
		case $verb in
		render | diff) COMPREPLY=($(compgen -W "folded perf" -- "$cur")) ;;
		heatmap) COMPREPLY=($(compgen -W "perf timed" -- "$cur")) ;;
		esac
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
