# SPDX-License-Identifier: LGPL-2.1-or-later
# fish completion for fgctl: verbs, each verb's options (read from its own
# --help, so they never drift), pids and comms for -p and --comm, and the
# output extensions fgctl knows for -o.

set -l fgctl_verbs record snapshot top status render diff heatmap push help version

# The options a verb's --help lists, each with the words after it.
function __fgctl_verb_options
    set -l verb (commandline -opc)[2]
    fgctl $verb --help 2>/dev/null | string match -r -- '^ +(?:-[a-zA-Z], )?--[a-z][a-z-]*' | string replace -r '^ +(?:-[a-zA-Z], )?' ''
end

complete -c fgctl -f
complete -c fgctl -n "not __fish_seen_subcommand_from $fgctl_verbs" -l socket -r -d 'fgd socket'
complete -c fgctl -n "not __fish_seen_subcommand_from $fgctl_verbs" -a record -d 'sample processes or the whole machine'
complete -c fgctl -n "not __fish_seen_subcommand_from $fgctl_verbs" -a snapshot -d 'the last minutes, from memory'
complete -c fgctl -n "not __fish_seen_subcommand_from $fgctl_verbs" -a top -d 'processes by CPU share'
complete -c fgctl -n "not __fish_seen_subcommand_from $fgctl_verbs" -a status -d 'what fgd is doing'
complete -c fgctl -n "not __fish_seen_subcommand_from $fgctl_verbs" -a render -d 'flame graph from folded or perf script'
complete -c fgctl -n "not __fish_seen_subcommand_from $fgctl_verbs" -a diff -d 'differential flame graph'
complete -c fgctl -n "not __fish_seen_subcommand_from $fgctl_verbs" -a heatmap -d 'subsecond-offset heat map'
complete -c fgctl -n "not __fish_seen_subcommand_from $fgctl_verbs" -a push -d 'to a Pyroscope-compatible server'
complete -c fgctl -n "not __fish_seen_subcommand_from $fgctl_verbs" -a 'help version'

complete -c fgctl -n "__fish_seen_subcommand_from $fgctl_verbs; and string match -q -- '-*' (commandline -ct)" -a '(__fgctl_verb_options)'
complete -c fgctl -n "__fish_seen_subcommand_from $fgctl_verbs" -s p -l pid -x -a '(__fish_complete_pids)'
complete -c fgctl -n "__fish_seen_subcommand_from $fgctl_verbs" -l comm -x -a '(ps -eo comm= 2>/dev/null | sort -u)'
complete -c fgctl -n "__fish_seen_subcommand_from $fgctl_verbs" -s o -l output -r -k -a '(__fish_complete_suffix .svg .html .folded .txt .timed .json .pb.gz .pprof)'
complete -c fgctl -n "__fish_seen_subcommand_from $fgctl_verbs" -s f -l format -x -a 'svg html folded timed pprof speedscope json'
complete -c fgctl -n "__fish_seen_subcommand_from $fgctl_verbs" -l group-by -x -a 'process cgroup cgroup-name'
complete -c fgctl -n "__fish_seen_subcommand_from $fgctl_verbs" -l call-graph -x -a 'fp dwarf'
complete -c fgctl -n "__fish_seen_subcommand_from $fgctl_verbs" -l from -x -a 'folded perf timed'
complete -c fgctl -n "__fish_seen_subcommand_from render diff heatmap" -F
