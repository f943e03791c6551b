"""The folder layout is the architecture (README "Layout"): what each package may import, and one
name per module.

- `serving/` imports only `chatparse.runtime`, its own modules and the standard library at module
  level (a template name or dict becomes a module through the dict API, imported inside the
  function that needs it).
- `compiler/` never imports the author tools, the command lines or the serving layer.
- No two modules of the package share a file name (`__init__.py` and tests aside).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _module_level_imports(path: Path) -> list[str]:
    """The absolute names a module imports at module level (relative imports resolved against its
    package; imports under `if TYPE_CHECKING:` left out)."""
    package = ["chatparse", *path.relative_to(ROOT).parent.parts]
    names = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                names.append(".".join([*base, *([node.module] if node.module else [])]))
            else:
                names.append(node.module or "")
    return names


def _package_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_serving_imports_only_the_runtime_and_the_standard_library():
    for path in _package_files("serving"):
        for name in _module_level_imports(path):
            assert name.split(".")[0] in sys.stdlib_module_names or name.split(".")[:2] in (
                ["chatparse", "runtime"],
                ["chatparse", "serving"],
            ), f"{path.relative_to(ROOT)} imports {name} at module level"


def test_the_compiler_imports_no_tool_cli_or_serving_module():
    for path in _package_files("compiler"):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:
                    depth = len(path.relative_to(ROOT).parent.parts)
                    if node.level <= depth:
                        continue  # inside the compiler; deeper, it names a top-level module
                else:
                    module = module.removeprefix("chatparse.")
                assert not module.startswith(
                    ("authoring", "cli", "serving", "openai")
                ), f"{path.relative_to(ROOT)} imports {module}"


def test_no_two_modules_share_a_name():
    names = Counter(
        path.name
        for path in ROOT.rglob("*.py")
        if path.name != "__init__.py"
        and not path.relative_to(ROOT).parts[0].startswith((".", "tests"))
    )
    assert [name for name, count in names.items() if count > 1] == []
