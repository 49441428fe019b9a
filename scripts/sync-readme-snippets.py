#!/usr/bin/env python3
"""Copies each tagged region of a sample source into the README block that names it.

README.md marks a snippet with `<!-- snippet: PATH#TAG -->` followed by a ```java block; the block is replaced by the
imports of PATH that the region uses, a blank line, and the lines between `// tag::TAG[]` and `// end::TAG[]` in PATH,
without their common indentation. ReadmeSnippetsTest fails the build when the two differ, when a block shows an import
its source does not have, or when a block does not compile on its own; run this after changing a sample.
"""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent


def region(path, tag):
    lines = (root / path).read_text(encoding="utf-8").split("\n")
    start = next(i for i, l in enumerate(lines) if l.strip() == f"// tag::{tag}[]")
    end = next(i for i, l in enumerate(lines) if l.strip() == f"// end::{tag}[]")
    body = lines[start + 1 : end]
    indent = min(len(l) - len(l.lstrip()) for l in body if l.strip())
    code = "\n".join(l[indent:] if l.strip() else "" for l in body)
    imports = [
        l.strip()
        for l in lines
        if l.startswith("import ")
        and not l.startswith("import static ")
        and re.search(r"\b" + re.escape(l.strip()[len("import ") : -1].split(".")[-1]) + r"\b", code)
    ]
    # types of the source's own package need no import there, but a reader's code does
    package = next(l.strip()[len("package ") : -1] for l in lines if l.startswith("package "))
    folder = package.replace(".", "/")
    declared = set(re.findall(r"\b(?:class|record|interface|enum)\s+([A-Z][A-Za-z0-9]*)", code))
    for name in sorted(set(re.findall(r"\b([A-Z][A-Za-z0-9]*)\b", code)) - declared):
        if any(root.glob(f"*/src/*/java/{folder}/{name}.java")):
            imports.append(f"import {package}.{name};")
    imports.sort()
    return "\n".join(imports) + "\n\n" + code


readme = root / "README.md"
text = readme.read_text(encoding="utf-8")
text = re.sub(
    r"(<!-- snippet: (\S+?)#(\S+?) -->\n```java\n)(.*?)\n```",
    lambda m: m.group(1) + region(m.group(2), m.group(3)) + "\n```",
    text,
    flags=re.S,
)
readme.write_text(text, encoding="utf-8")
