# SPDX-License-Identifier: LGPL-2.1-or-later
# fish completion for fgctl: verbs, each verb's options (read from its own
# --help, so they never drift), pids and comms for -p and --comm, the formats
# each verb takes for -f and --from, and the output extensions fgctl knows
# for -o.

# The verb: the first word that is not a global option or its value.
function __fgctl_verb
    set -l words (commandline -opc)
    set -e words[1]
    while set -q words[1]
        switch $words[1]
            case --socket -s
                set -e words[1] # and its value, below
            case '-*'
            case '*'
                echo $words[1]
                return 0
        end
        set -e words[1]
    end
    return 1
end

# Whether the verb on the command line is one of $argv.
function __fgctl_verb_is
    set -l verb (__fgctl_verb); and contains -- $verb $argv
end

# The options the verb on the command line takes: every one on each option
# line of its --help, which may name several ("--since TIME, --until TIME");
# see fgctl.bash for how the lines are read. Where the help lists none, those
# the verb is known to take.
function __fgctl_verb_options
    set -l verb (__fgctl_verb); or return
    # Each condition below asks: keep the answer for the command line it is for,
    # or one TAB would run fgctl --help a dozen times.
    set -l line (commandline -p | string join \n)
    if test "$line" = "$__fgctl_options_line"
        printf '%s\n' $__fgctl_options
        return
    end
    set -l opts (fgctl $verb --help 2>/dev/null | awk '
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
    if not set -q opts[1]
        switch $verb
            case status
                set opts --json
        end
    end
    set -g __fgctl_options_line $line
    set -g __fgctl_options $opts
    printf '%s\n' $opts
end

# Whether the verb on the command line takes the option $argv[1].
function __fgctl_takes
    contains -- $argv[1] (__fgctl_verb_options)
end

# The -f values each verb takes, as its --help lists them; diff refuses pprof
# and speedscope (a differential profile has neither form), which the help it
# shares with render names.
function __fgctl_formats
    switch (__fgctl_verb)
        case record
            printf '%s\n' svg html folded timed pprof speedscope
        case snapshot render
            printf '%s\n' svg html folded pprof speedscope
        case diff
            printf '%s\n' svg html folded
        case heatmap
            printf '%s\n' html json svg timed
        case push
            printf '%s\n' pprof folded
    end
end

function __fgctl_inputs
    switch (__fgctl_verb)
        case render diff
            printf '%s\n' folded perf
        case heatmap
            printf '%s\n' perf timed
    end
end

# Directories to walk into, and the files whose extension fgctl writes.
# (__fish_complete_suffix takes one suffix, and lists the other files too.)
function __fgctl_output_files
    set -l token (commandline -ct)
    # A command without completions gets fish's own file completion.
    complete -C "__fgctl_no_such_command $token" |
        string match -r -- '^.*(?:/|\.(?:svg|html|folded|txt|timed|json|pprof|pb\.gz))$'
end

complete -c fgctl -f
complete -c fgctl -n 'not __fgctl_verb' -s s -l socket -r -F -d 'fgd socket'
complete -c fgctl -n 'not __fgctl_verb' -s h -l help -d 'show the help'
complete -c fgctl -n 'not __fgctl_verb' -l version -d 'show the version'
complete -c fgctl -n 'not __fgctl_verb' -a record -d 'sample processes or the whole machine'
complete -c fgctl -n 'not __fgctl_verb' -a snapshot -d 'the last minutes, from memory'
complete -c fgctl -n 'not __fgctl_verb' -a top -d 'processes by CPU share'
complete -c fgctl -n 'not __fgctl_verb' -a status -d 'what fgd is doing'
complete -c fgctl -n 'not __fgctl_verb' -a render -d 'flame graph from folded or perf script'
complete -c fgctl -n 'not __fgctl_verb' -a diff -d 'differential flame graph'
complete -c fgctl -n 'not __fgctl_verb' -a heatmap -d 'subsecond-offset heat map'
complete -c fgctl -n 'not __fgctl_verb' -a push -d 'to a Pyroscope-compatible server'
complete -c fgctl -n 'not __fgctl_verb' -a 'help version'

complete -c fgctl -n "__fgctl_verb; and string match -q -- '-*' (commandline -ct)" -a '(__fgctl_verb_options)'
# The values of the options that take one. fish also offers each option
# declared here, so each is declared only for the verbs whose --help lists
# it; render's and diff's --pid is a flag (root frames 'comm-PID').
complete -c fgctl -n '__fgctl_takes -p' -s p -x -a '(__fish_complete_pids)'
complete -c fgctl -n '__fgctl_takes --pid; and not __fgctl_verb_is render diff' -l pid -x -a '(__fish_complete_pids)'
complete -c fgctl -n '__fgctl_takes --comm' -l comm -x -a '(ps -eo comm= 2>/dev/null | sort -u)'
complete -c fgctl -n '__fgctl_takes -s' -s s -r -F
complete -c fgctl -n '__fgctl_takes --socket' -l socket -r -F
complete -c fgctl -n '__fgctl_takes -o' -s o -x -a '(__fgctl_output_files)'
complete -c fgctl -n '__fgctl_takes --output' -l output -x -a '(__fgctl_output_files)'
complete -c fgctl -n '__fgctl_takes -f' -s f -x -a '(__fgctl_formats)'
complete -c fgctl -n '__fgctl_takes --format' -l format -x -a '(__fgctl_formats)'
complete -c fgctl -n '__fgctl_takes --group-by' -l group-by -x -a 'process cgroup cgroup-name'
complete -c fgctl -n '__fgctl_takes --call-graph' -l call-graph -x -a 'fp dwarf'
complete -c fgctl -n '__fgctl_takes --from' -l from -x -a '(__fgctl_inputs)'
complete -c fgctl -n '__fgctl_verb_is render diff heatmap' -F
