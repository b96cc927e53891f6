# bash completion for devbulk. Install: copy to
# /usr/share/bash-completion/completions/devbulk (or source it).
# devbulk itself answers (urfave/cli's --generate-bash-completion): the
# commands, subcommands and flags of the installed version.
_devbulk() {
	local cur=${COMP_WORDS[COMP_CWORD]} words
	if [[ $cur == -* ]]; then
		words=$("${COMP_WORDS[@]:0:COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
	else
		words=$("${COMP_WORDS[@]:0:COMP_CWORD}" --generate-bash-completion 2>/dev/null)
	fi
	COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o bashdefault -o default -F _devbulk devbulk
