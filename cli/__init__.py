"""The command lines: `compile-template` (compile_template.py; also
`python -m chatparse.cli.compile_template --write-all/--check-all`) and `chatparse`
(chatparse_command.py: demo, parse, and the template author's commands of
chatparse.authoring.commands).
"""
