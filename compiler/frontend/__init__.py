"""Front end: template JSON -> a checked `TemplateSpec` (spec.py) and each delimiter's regex AST.

Takes the template dict; gives the validated spec (the reference's error text for a template it
rejects) and, per delimiter pattern, a `RegexNode` tree (regex.lark, regex_parse.py, regex_ast.py)
whose char classes leave `\\w`, `\\s` and `\\d` symbolic (symbolic_charclass.py).
"""
