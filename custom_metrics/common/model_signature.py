"""A registered model class's constructor, read from its source without importing it.

Why: the sweep and ``explain-eval lm-eval`` check a ``--model``'s required arguments before
anything loads, and importing lm-eval's ``hf`` class imports torch, transformers and accelerate
(5 of a dry run's 7 s) to read one signature. lm-eval registers classes lazily as
``"module:Class"``, so the file is found by importlib's finder and ``__init__`` read with
``ast``, following base classes through the module's imports. Whether the class could be
imported is answered the same way (every module it imports must be findable). Where the source
does not say, the caller imports the class.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
from dataclasses import dataclass
from pathlib import Path

# Where a class's source chain ends: these define no constructor arguments of their own.
_ROOTS = {"object", "abc:ABC", "typing:Generic"}
_KINDS = {
    "posonlyargs": inspect.Parameter.POSITIONAL_ONLY,
    "args": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "kwonlyargs": inspect.Parameter.KEYWORD_ONLY,
}


@dataclass(frozen=True)
class Constructor:
    """A class's ``__init__`` parameters (without ``self``) and what its source chain holds."""

    parameters: tuple[inspect.Parameter, ...]
    classes: tuple[str, ...]  # "module:Class" of the class and of each base read on the way
    missing: tuple[str, ...]  # top-level modules imported by those modules that cannot be found here


@dataclass(frozen=True)
class _Module:
    tree: ast.Module
    names: dict[str, str]  # a name bound by an import -> "module" or "module:attribute"
    imported: tuple[str, ...]  # top-level modules imported outright (not under try, if or a function)


class _Unknown(Exception):
    """The source does not say which constructor the class has."""


def read_constructor(target: str) -> Constructor | None:
    """The constructor of the class ``target`` ("module:Class") from its source, or None where
    the source does not say it (see the module docstring)."""
    classes: list[str] = []
    try:
        found = _find_init(target, classes, depth=0)
    except _Unknown:
        return None
    modules = dict.fromkeys(name.split(":")[0] for name in classes)
    missing = sorted({m.split(".")[0] for module in modules for m in _module(module).imported if not _findable(m)})
    return Constructor(parameters=found or (), classes=tuple(classes), missing=tuple(missing))


def _find_init(target: str, seen: list[str], depth: int) -> tuple[inspect.Parameter, ...] | None:
    """The first ``__init__`` along ``target``'s bases, depth first in their order with the
    roots last (Python's method order for the chains of model classes); None when only a root
    (``object``) defines one."""
    if target in _ROOTS:
        return None
    if depth > 20 or ":" not in target:
        raise _Unknown(target)
    module_name, class_name = target.split(":", 1)
    try:
        module = _module(module_name)
    except (ImportError, OSError, SyntaxError, ValueError):
        raise _Unknown(target) from None
    node = next((n for n in module.tree.body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    if node is None:
        raise _Unknown(target)
    seen.append(target)
    init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is not None:
        return _parameters(init.args)
    for base in node.bases:
        resolved = _resolve(base, module_name, module)
        if resolved is None:
            raise _Unknown(ast.unparse(base))
        found = _find_init(resolved, seen, depth + 1)
        if found is not None:
            return found
    return None


def _parameters(arguments: ast.arguments) -> tuple[inspect.Parameter, ...]:
    """inspect's parameters for a ``def``'s arguments, ``self`` dropped; a default is kept as
    its source text (only whether there is one matters here)."""
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: dict[str, str] = {
        arg.arg: ast.unparse(default) for arg, default in zip(positional[::-1], arguments.defaults[::-1], strict=False)
    }
    for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if default is not None:
            defaults[arg.arg] = ast.unparse(default)
    parameters = []
    for field, kind in _KINDS.items():
        parameters += [
            inspect.Parameter(arg.arg, kind, default=defaults.get(arg.arg, inspect.Parameter.empty))
            for arg in getattr(arguments, field)
        ]
        if field == "args" and arguments.vararg is not None:
            parameters.append(inspect.Parameter(arguments.vararg.arg, inspect.Parameter.VAR_POSITIONAL))
    if arguments.kwarg is not None:
        parameters.append(inspect.Parameter(arguments.kwarg.arg, inspect.Parameter.VAR_KEYWORD))
    return tuple(parameters[1:])


def _resolve(base: ast.expr, module_name: str, module: _Module) -> str | None:
    """A base-class expression as "module:Class": a class of the same module, a name bound by an
    import, or ``package.Class`` through an imported module; None for anything else."""
    if isinstance(base, ast.Subscript):  # Generic[T], a parametrised base
        base = base.value
    if isinstance(base, ast.Name):
        if base.id == "object":
            return "object"
        if any(isinstance(n, ast.ClassDef) and n.name == base.id for n in module.tree.body):
            return f"{module_name}:{base.id}"
        bound = module.names.get(base.id, "")
        return bound if ":" in bound else None
    if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
        bound = module.names.get(base.value.id)
        return f"{bound}:{base.attr}" if bound is not None and ":" not in bound else None
    return None


@functools.cache
def _module(name: str) -> _Module:
    """A module's syntax tree and imports, from the file importlib's finder names."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        raise ImportError(f"no Python source for {name}")
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"), filename=spec.origin)
    package = name if spec.submodule_search_locations is not None else name.rpartition(".")[0]
    names: dict[str, str] = {}
    imported: list[str] = []
    for node in tree.body:  # module level only: what runs when the module is imported
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                names[alias.asname or top] = alias.name if alias.asname else top
                imported.append(alias.name)
        elif isinstance(node, ast.ImportFrom):
            source = node.module
            if node.level:
                source = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            if source is None or source == "__future__":
                continue
            imported.append(source)
            for alias in node.names:
                names[alias.asname or alias.name] = f"{source}:{alias.name}"
    return _Module(tree=tree, names=names, imported=tuple(dict.fromkeys(imported)))


@functools.cache
def _findable(module: str) -> bool:
    """Whether ``module`` would be found on import, asking the finder of its top-level package
    only (a submodule's finder imports its parents)."""
    top = module.split(".")[0]
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False
