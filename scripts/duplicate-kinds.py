#!/usr/bin/env python3
"""Splits the pairs `duplicates` lists into declaration lists and shared statements.

`duplicates` pairs places by the shape of their lines, so two structs' stored properties, two
commands' `@Option` lists or two error types' code lists pair up although no rule is written
twice. This script reads each pair's two line ranges and calls a pair a *declaration list* only
when every line of both sides is one of: a comment, a brace, a stored property, an argument
parser option, an enum case, a static constant, an init's or a function's signature and
parameter list, or an init's `self.x = x`; it counts those by what they list (memberwise
inits, option lists, code lists, property lists). Every other pair is listed with the lines that
made it so, to be read by hand.

Usage (from the folder `duplicates` ran in):
    duplicates --most 200 --seconds 120 > /tmp/dups.txt && python3 scripts/duplicate-kinds.py /tmp/dups.txt
Run it in `Sources/` for issue 46's figure.
"""
import re
import sys

DECLARATION = [re.compile(pattern) for pattern in [
    r'^\s*$', r'^\s*//', r'^\s*[{}()\[\]]*,?$',
    # stored and computed-constant properties, static constants
    r'^\s*(@\w+ )?((public|private|fileprivate|internal|package|nonisolated|static|private\(set\)|public\(set\)) )*(let|var) \w+(: [^=]+)?( = .*)?$',
    r'^\s*(public )?(var|let) \w+: [^{]+ \{ [^}]* \}$',
    # argument parser declarations and their arguments
    r'^\s*@(Option|Flag|Argument|OptionGroup)\b.*', r'^\s*(help|name|transform|parsing)\s*:.*', r'^\s*"[^"]*"\s*\)?,?$',
    # a settings table's rows: section, key, help
    r'^\s*"[^"]*", "[^"]*",( help: "[^"]*"\))?,?$',
    # enum cases
    r'^\s*(public |indirect )?case [\w, ]+(\(.*\))?( = .*)?$',
    # type, init and function heads and their parameter lists
    r'^\s*((public|private|fileprivate|internal|final|indirect) )*(struct|enum|class|actor|extension|protocol) .*\{$',
    r'^\s*((public|private|fileprivate|internal|static|nonisolated|mutating) )*(init|func)\b.*$',
    r'^\s*\w+( \w+)?: [^=]+(,)?$', r'^\s*\w+( \w+)?: [^=]+ = [^=]+,?$',
    r'^\s*\) (async )?(throws[^{]*)?(-> .*)?\{$',
    # an init storing its parameters
    r'^\s*self\.\w+ = [\w.]+$',
]]


def is_declaration(line: str) -> bool:
    return any(pattern.match(line) for pattern in DECLARATION)


def lines_of(place: str) -> list[str]:
    path, span = place.rsplit(':', 1)
    first, last = map(int, span.split('-'))
    with open(path) as file:
        return file.read().split('\n')[first - 1:last]


KINDS = [
    # what a side's lines mostly are, checked in this order
    ('memberwise inits', re.compile(r'^\s*self\.(\w+) = \1$'), 3),
    ('option lists', re.compile(r'^\s*@(Option|Flag|Argument)\b'), 2),
    ('code lists', re.compile(r'^\s*(public )?static let \w+ = (Self|\w+)\('), 3),
]


def kind_of(sides: list[list[str]]) -> str:
    for name, pattern, least in KINDS:
        if any(sum(1 for line in side if pattern.match(line)) >= least for side in sides):
            return name
    return 'property lists'


def main() -> int:
    rows = [line.strip() for line in open(sys.argv[1]) if re.match(r'^D\d+ ', line)]
    statements = []
    kinds: dict[str, int] = {}
    for row in rows:
        fields = row.split()
        sides = [lines_of(place) for place in (fields[1], fields[3])]
        others = [line.strip() for side in sides for line in side if not is_declaration(line)]
        if others:
            statements.append((row, others))
        else:
            kind = kind_of(sides)
            kinds[kind] = kinds.get(kind, 0) + 1
    print(f'{len(rows)} pairs: {len(rows) - len(statements)} declaration lists, {len(statements)} with statements')
    print('declaration lists: ' + ', '.join(f'{count} {kind}' for kind, count in sorted(kinds.items(), key=lambda item: -item[1])))
    for row, others in statements:
        print(row)
        for line in others[:3]:
            print('    |', line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
