"""Shell completion for `hilrig`, generated from the argparse parser itself (nothing to keep in step)."""
from __future__ import annotations

import argparse


def _words(parser: argparse.ArgumentParser) -> tuple[list[str], dict[str, argparse.ArgumentParser]]:
    options, subs = [], {}
    for action in parser._actions:  # argparse has no public walk of its actions
        options += [o for o in action.option_strings if o.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            subs.update(action.choices)
    return options, subs


def _entries(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, list[str]]:
    """'' -> top-level words, 'run' -> its options, 'rig check' -> ..."""
    options, subs = _words(parser)
    out = {prefix.strip(): sorted(subs) + options}
    for name, sub in subs.items():
        out.update(_entries(sub, f"{prefix}{name} "))
    return out


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    entries = _entries(parser)
    cases = "\n".join(f'        "{key}") words="{" ".join(words)}" ;;' for key, words in sorted(entries.items()))
    script = f"""# hilrig completion ({shell}): eval "$(hilrig completion {shell})"
_hilrig_complete() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" path="" w words i
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${{COMP_WORDS[i]}}"
        [[ "$w" == -* ]] && continue
        case "$path${{path:+ }}$w" in
{chr(10).join(f'            "{key}") path="{key}" ;;' for key in sorted(entries) if key)}
        esac
    done
    case "$path" in
{cases}
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    [[ ${{#COMPREPLY[@]}} -eq 0 ]] && COMPREPLY=($(compgen -f -- "$cur"))
    return 0
}}
complete -o filenames -F _hilrig_complete hilrig
"""
    if shell == "zsh":
        script = "autoload -U +X bashcompinit && bashcompinit\n" + script
    return script
