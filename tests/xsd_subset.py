"""An XML document checked against an XML Schema (XSD) with the standard library alone (no
lxml or xmllint on this host): the subset that tests/fixtures/junit/junit.xsd uses, global
elements by name and ref, complex types of a sequence or a choice with minOccurs and
maxOccurs, attributes with use="required" and the types xs:string, xs:decimal and
xs:nonNegativeInteger, and simple content (text) with attributes. A construct outside that
subset raises, so a schema it cannot read fails the test instead of passing it."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

XS = "{http://www.w3.org/2001/XMLSchema}"
TYPES = {
    "xs:string": re.compile(r".*", re.S),
    "xs:decimal": re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)"),
    "xs:nonNegativeInteger": re.compile(r"\+?\d+"),
}


class Invalid(Exception):
    """The document breaks the schema: where and how."""


class Schema:
    def __init__(self, path: Path) -> None:
        self.root = ET.parse(path).getroot()
        self.elements = {e.get("name"): e for e in self.root.findall(f"{XS}element")}

    def validate(self, document: bytes) -> None:
        top = ET.fromstring(document)
        if top.tag not in self.elements:
            raise Invalid(f"<{top.tag}> is no element the schema declares at its top")
        self._element(self.elements[top.tag], top, top.tag)

    def _element(self, declared: ET.Element, node: ET.Element, where: str) -> None:
        if declared.get("type") is not None:  # a simple type: text, no attributes or children
            _text(declared.get("type", ""), node.text or "", where)
            if len(node) or node.attrib:
                raise Invalid(f"{where}: a simple element with children or attributes")
            return
        kind = declared.find(f"{XS}complexType")
        if kind is None:
            raise Invalid(f"{where}: the schema's element has no type this reader knows")
        content = kind.find(f"{XS}simpleContent")
        if content is not None:
            extension = content.find(f"{XS}extension")
            if extension is None or extension.get("base") not in TYPES or len(node):
                raise Invalid(f"{where}: text with attributes expected, children found")
            self._attributes(extension, node, where)
            return
        self._attributes(kind, node, where)
        if (node.text or "").strip():
            raise Invalid(f"{where}: text where only elements may be")
        children = list(node)
        group = [c for c in kind if c.tag in (f"{XS}sequence", f"{XS}choice")]
        unknown = [c.tag for c in kind if c.tag not in (f"{XS}sequence", f"{XS}choice")]
        if any(not tag.endswith("attribute") for tag in unknown):
            raise Invalid(f"{where}: the schema uses {unknown}, outside this reader's subset")
        at = self._group(group[0], children, 0, where) if group else 0
        if at != len(children):
            raise Invalid(f"{where}: <{children[at].tag}> is not allowed here")

    def _attributes(self, kind: ET.Element, node: ET.Element, where: str) -> None:
        declared = {a.get("name"): a for a in kind.findall(f"{XS}attribute")}
        for name, attribute in declared.items():
            if attribute.get("use") == "required" and name not in node.attrib:
                raise Invalid(f"{where}: required attribute {name!r} is missing")
        for name, value in node.attrib.items():
            if name not in declared:
                raise Invalid(f"{where}: attribute {name!r} is not in the schema")
            _text(declared[name].get("type", "xs:string"), value, f"{where}@{name}")

    def _group(self, group: ET.Element, children: list[ET.Element], at: int, where: str) -> int:
        """Match a sequence or choice from child `at` on, as often as it may occur; the index
        after what it took."""
        least, most = _occurs(group)
        times = 0
        while times < most:
            moved = self._once(group, children, at, where)
            if moved is None:
                break
            at, times, progressed = moved, times + 1, moved > at
            if not progressed:  # a sequence of optional parts, met empty: once is enough
                break
        if times < least:
            raise Invalid(f"{where}: a {group.tag.removeprefix(XS)} that must occur is missing")
        return at

    def _once(
        self, group: ET.Element, children: list[ET.Element], at: int, where: str
    ) -> int | None:
        if group.tag == f"{XS}choice":
            for particle in group:
                name = particle.get("ref") or particle.get("name")
                if at < len(children) and children[at].tag == name:
                    return self._particle(particle, children, at, where)
            return None
        for particle in group:
            at = self._particle(particle, children, at, where)
        return at

    def _particle(
        self, particle: ET.Element, children: list[ET.Element], at: int, where: str
    ) -> int:
        if particle.tag in (f"{XS}sequence", f"{XS}choice"):
            return self._group(particle, children, at, where)
        if particle.tag != f"{XS}element":
            raise Invalid(f"{where}: the schema uses {particle.tag}, outside this reader's subset")
        name = particle.get("ref") or particle.get("name")
        declared = self.elements[name] if particle.get("ref") else particle
        least, most = _occurs(particle)
        times = 0
        while times < most and at < len(children) and children[at].tag == name:
            self._element(declared, children[at], f"{where}/{name}[{times + 1}]")
            at, times = at + 1, times + 1
        if times < least:
            raise Invalid(f"{where}: <{name}> must occur at least {least} time(s)")
        return at


def _occurs(particle: ET.Element) -> tuple[int, float]:
    most = particle.get("maxOccurs", "1")
    return int(particle.get("minOccurs", "1")), float("inf") if most == "unbounded" else int(most)


def _text(kind: str, value: str, where: str) -> None:
    if kind not in TYPES:
        raise Invalid(f"{where}: type {kind} is outside this reader's subset")
    if not TYPES[kind].fullmatch(value):
        raise Invalid(f"{where}: {value!r} is not an {kind}")
