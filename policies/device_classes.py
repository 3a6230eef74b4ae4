"""DRA DeviceClasses (`resource.k8s.io/v1`): what a class selects, whether it serves an extended resource
(KEP-5004), and whether the API server would accept its CEL selectors at all. Pure; no Pulumi imports.

The API server compiles each `spec.selectors[].cel.expression` when the DeviceClass is written
(k8s.io/dynamic-resource-allocation v0.37.2 `cel/compile.go`, `CompileCELExpression`): the expression must
parse, may name only the variable `device` (with `driver`, `attributes`, `capacity`,
`allowMultipleAllocations`), must evaluate to bool ("must evaluate to bool"), and may hold at most
`CELSelectorExpressionMaxLength` characters (k8s.io/api v0.37.2 `resource/v1/types.go`: 10 Ki), nested at
most as deep as cel-go's parser goes (`limits.MAX_CEL_NESTING`: 250; deeper, 10 Ki characters of `(` fit). A class it
refuses never exists, so no claim of it is ever allocated.

Read here with cel-python's parser (`celpy`, the `cel` extra of this package): syntax errors, references to
anything but `device` and the variables a macro binds (`exists(k, ...)`), and a result that plainly is not a
bool (a string, a number, `device.driver` alone). What only the API server's type checker sees (an overload
that does not exist, such as `device.driver > 1`) is not caught here; the cluster tier sends the same
expressions to a real API server (`tests/cluster/`). Without cel-python the length alone is checked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .limits import MAX_CEL_NESTING, MAX_CEL_SELECTOR_CHARS, MAX_SHOWN_CHARS, clipped
from .podspecs import api_group, as_list, as_mapping, as_str

#: The variable a DRA selector reads (`cel/compile.go` `deviceVar`).
DEVICE_VARIABLE = "device"
#: CEL's macros that bind a variable for their second argument (cel-spec `langdef.md`, "Macros").
_BINDING_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
#: Grammar nodes that are one value passed through when they have a single child (cel-python's grammar).
_PASS_THROUGH = frozenset({"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary"})


@dataclass(frozen=True)
class DeviceClass:
    """A DeviceClass as the scheduler reads it."""

    name: str
    #: Each selector's CEL expression, in order.
    expressions: tuple[str, ...]
    #: The extended resource this class serves (KEP-5004, `spec.extendedResourceName`), or None.
    extended_resource_name: str | None = None


def device_class(obj: Mapping[str, Any], name: str) -> DeviceClass:
    spec = as_mapping(obj.get("spec"))
    expressions = tuple(as_str(as_mapping(as_mapping(selector).get("cel")).get("expression"))
                        for selector in as_list(spec.get("selectors")))
    return DeviceClass(name, expressions, as_str(spec.get("extendedResourceName")) or None)


def selector_problem(expression: str) -> str | None:
    """Why the API server refuses this DeviceClass selector, in its words where it has them, or None."""
    if len(expression) > MAX_CEL_SELECTOR_CHARS:
        return f"it has {len(expression)} characters; the API server takes at most {MAX_CEL_SELECTOR_CHARS}"
    if _nesting(expression) > MAX_CEL_NESTING:
        return f"it nests deeper than {MAX_CEL_NESTING} levels, the CEL parser's limit: max recursion depth exceeded"
    try:
        import celpy  # the `cel` extra: the light package needs only PyYAML
    except ImportError:
        return None
    try:
        tree = celpy.Environment().compile(expression)
    except celpy.CELParseError as error:
        line, column = getattr(error, "line", None), getattr(error, "column", None)
        at = f" at line {line}, column {column}" if line and column else ""
        return f"compilation failed: Syntax error{at}"
    undeclared = sorted(set(_identifiers(tree)) - {DEVICE_VARIABLE} - set(_bound(tree)))
    if undeclared:
        return f"compilation failed: undeclared reference to '{clipped(undeclared[0], MAX_SHOWN_CHARS, MAX_SHOWN_CHARS)}'"
    if _plainly_not_bool(tree):
        return "must evaluate to bool"
    return None


def _nesting(expression: str) -> int:
    """How deep cel-go's parser recurses into `expression`: the deepest nesting of parentheses, brackets and
    braces, or the longest chain of member selections and indexes on one value (`a.b[0].c()`: 3), whichever
    is greater; read in one pass, not by recursion, since the text is input, with string literals skipped.
    Measured against cel-go v0.29.2's parser: 251 nested parentheses or lists, and a chain of 251, are refused;
    runs of `!` or `-` are one grammar rule and nest nothing (10 000 of them parse). At exactly 250 cel-go
    refuses parentheses and chains but not lists, and it also counts long `+` or `==` chains: those edge forms
    are left to the API server (the cluster tier), so nothing the parser takes is refused here."""
    depth, chain, deepest, quote, previous = 0, [0], 0, "", ""
    position = 0
    while position < len(expression):
        char = expression[position]
        if quote:
            if char == "\\":
                position += 1
            elif expression.startswith(quote, position):
                position += len(quote) - 1
                quote, char = "", "v"  # a string value: what follows may select from it
        elif char in "\"'":
            quote = expression[position:position + 3] if expression.startswith(char * 3, position) else char
            position += len(quote) - 1
        elif char in "([{":
            if char == "[" and (previous.isalnum() or previous in "_)]v"):
                chain[-1] += 1  # an index on the value before it (a call is one step with its selection)
            depth += 1
            chain.append(0)
        elif char in ")]}":
            depth = max(depth - 1, 0)
            if len(chain) > 1:
                chain.pop()
        elif char == "." and (previous.isalpha() or previous in "_)]v"):
            chain[-1] += 1
        elif not (char.isalnum() or char in "_ \t\r\n"):
            chain[-1] = 0
        deepest = max(deepest, depth, chain[-1])
        if not char.isspace() and not quote:
            previous = char
        position += 1
    return deepest


def _nodes(tree: Any) -> Iterator[tuple[Any, list[Any]]]:
    """Every rule node of the tree with its children (an iterative walk: selectors are input)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        children = getattr(node, "children", None)
        if children is None:
            continue
        yield node, children
        pending.extend(children)


def _tokens(tree: Any, rule: str) -> Iterator[str]:
    """The token text of every `rule` node."""
    for node, children in _nodes(tree):
        if getattr(node, "data", None) == rule and children and not hasattr(children[0], "children"):
            yield str(children[0])


def _identifiers(tree: Any) -> Iterator[str]:
    yield from _tokens(tree, "ident")


def _bound(tree: Any) -> Iterator[str]:
    """The variables macros bind: the first argument of `x.exists(k, ...)` and its kin."""
    for node, children in _nodes(tree):
        if getattr(node, "data", None) == "member_dot_arg" and len(children) >= 3 and str(children[1]) in _BINDING_MACROS:
            arguments = getattr(children[2], "children", [])
            if arguments:
                yield from list(_identifiers(arguments[0]))[:1]


def _plainly_not_bool(tree: Any) -> bool:
    """Whether the expression's value is a string or a number, or `device`, `device.driver` alone."""
    node = tree
    while getattr(node, "data", None) in _PASS_THROUGH and len(node.children) == 1:
        node = node.children[0]
    kind = getattr(node, "data", None)
    if kind in ("addition", "multiplication"):
        return True  # arithmetic or concatenation: never a bool
    if kind != "member":
        return False
    chain = node.children[0]
    if getattr(chain, "data", None) == "primary":
        inner = chain.children[0]
        if getattr(inner, "data", None) == "literal":
            return str(inner.children[0]) not in ("true", "false")
        return getattr(inner, "data", None) == "ident" and str(inner.children[0]) == DEVICE_VARIABLE
    if getattr(chain, "data", None) == "member_dot":
        base, field = chain.children[0], str(chain.children[1])
        return field == "driver" and _is_device(base)
    return False


def _is_device(node: Any) -> bool:
    """Whether `node` is the member `device` itself."""
    if getattr(node, "data", None) != "member" or not node.children:
        return False
    primary = node.children[0]
    if getattr(primary, "data", None) != "primary" or not primary.children:
        return False
    inner = primary.children[0]
    return getattr(inner, "data", None) == "ident" and str(inner.children[0]) == DEVICE_VARIABLE


def device_class_refusals(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(path, why) for each selector the API server would refuse, when `obj` is a DeviceClass (else none)."""
    if obj.get("kind") != "DeviceClass" or api_group(obj) != "resource.k8s.io":
        return []
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    refusals = []
    for index, selector in enumerate(as_list(as_mapping(obj.get("spec")).get("selectors"))):
        expression = as_mapping(as_mapping(selector).get("cel")).get("expression")
        path = f"spec.selectors[{index}].cel.expression"
        if not isinstance(expression, str):
            continue  # a selector of another kind, or none: the API server's schema says, not its CEL
        problem = selector_problem(expression)
        if problem:
            refusals.append((path, f"DeviceClass '{clipped(name, MAX_SHOWN_CHARS, MAX_SHOWN_CHARS)}' {path}: the "
                                   f"API server refuses this selector ({problem}), so the class is never created and "
                                   "no claim of it is allocated"))
    return refusals
