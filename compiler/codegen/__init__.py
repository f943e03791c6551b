"""Code generation: the plan -> Python source.

Takes the `RegionAutomaton` and the plans; gives the module's text: `build_module` decides every
name, literal and comment in a `ModuleModel` (codemodel.py, with re_source.py spelling a pattern
for `re`), and `render_module` prints it through templates/module.py.j2 (jinja2), then black
(emit.py).
"""
