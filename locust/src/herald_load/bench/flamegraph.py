"""Flame graphs of CPU samples as standalone SVG images (``docs/perf/<benchmark>-<service>.svg``).

The stacks (innermost frame first, as :func:`herald_load.bench.profile.parse_stacks` reads them) are
merged into one tree from the outermost frame to the innermost, under a root that counts every sample.
Each node is a rectangle as wide as its share of the samples, one row per depth with the root at the
bottom; siblings are in alphabetical order, not by time, so the same stacks always give the same bytes.
The colour is the frame's area (:func:`herald_load.bench.profile.area`), Herald's own frames in blue
among the warm library and JDK colours. Hovering over a rectangle shows its whole frame, samples and share.

Stacks deeper than JFR keeps (:data:`herald_load.bench.profile.STACK_DEPTH` frames in the
benchmarks' JVMs) are cut at their outer end: their outermost frame here is somewhere in the middle
of the thread's real stack, so they stand on the root as towers of their own rather than above the
thread's first frame.
"""
from __future__ import annotations

from xml.sax.saxutils import escape

from herald_load.bench import profile

WIDTH = 1200
PAD = 10
ROW = 16
FONT = 11
MIN_SHARE = 0.001      # narrower nodes (and what is above them) are left out: invisible, and they make the file large
CHAR = 0.6 * FONT      # estimated width of a character
ROOT_COLOUR = "#c8c8c8"
COLOURS = {"Herald": "#5a96e6", "Lettuce (Redis)": "#e8743b", "RabbitMQ client": "#ef8f55",
           "Spring AMQP": "#d9a05b", "Reactor Netty": "#f2ab2e", "Reactor": "#f5c451", "Netty": "#f3d36b",
           "Jackson": "#e49a78", "Micrometer": "#c9a77c", "Spring": "#dcba8b", "Logback": "#c8b39a",
           "JDK NIO": "#e05d57", "JDK concurrency": "#e9807a", "JDK internal": "#ee9d96", "JDK": "#f3bab3",
           "other": "#d6cfc4"}


class _Node:
    __slots__ = ("samples", "children")

    def __init__(self) -> None:
        self.samples = 0
        self.children: dict[str, _Node] = {}


def _tree(stacks: list[list[str]]) -> _Node:
    root = _Node()
    for stack in stacks:
        root.samples += 1
        node = root
        for frame in reversed(stack):
            node = node.children.setdefault(frame, _Node())
            node.samples += 1
    return root


def _short(frame: str) -> str:
    """``Class.method`` of a frame: the package and parameters only fit in the tooltip."""
    method = frame.split("(", 1)[0]
    return ".".join(method.split(".")[-2:])


def _label(text: str, width: float) -> str:
    fits = int((width - 6) / CHAR)
    if fits >= len(text):
        return text
    return text[:fits - 2].rstrip(".") + ".." if fits >= 5 else ""   # "io..", not "io..."


def svg(stacks: list[list[str]], title: str, subtitle: str = "") -> str:
    """A flame graph of the stacks (each innermost frame first) as an SVG document."""
    root = _tree(stacks)
    total = root.samples
    scale = (WIDTH - 2 * PAD) / max(total, 1)
    # name, area, samples, x, width, depth; the root is no frame, and full width even without samples
    boxes = [(f"all ({total} samples)", "", total, float(PAD), float(WIDTH - 2 * PAD), 0)]

    def above(node: _Node, x: float, depth: int) -> None:
        for name in sorted(node.children):
            child = node.children[name]
            if child.samples >= MIN_SHARE * total:
                boxes.append((name, profile.area(name), child.samples, x, child.samples * scale, depth))
                above(child, x, depth + 1)
            x += child.samples * scale

    above(root, PAD, 1)
    legend, x, y = [], PAD, 46
    for name in [label for label in COLOURS if any(box[1] == label for box in boxes)]:
        step = 14 + len(name) * CHAR + 12
        if x + step > WIDTH - PAD:
            x, y = PAD, y + 14
        legend.append(f'<rect x="{x:.1f}" y="{y}" width="10" height="10" fill="{COLOURS[name]}"/>'
                      f'<text x="{x + 14:.1f}" y="{y + 9}">{escape(name)}</text>')
        x += step
    bottom = y + 14 + max(box[5] for box in boxes) * ROW + ROW   # lowest pixel of the root's row
    height = bottom + PAD
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
           f'font-size="{FONT}">',
           '<style>rect{stroke:#fff;stroke-width:0.5}g:hover rect{stroke:#000}</style>',
           f'<rect width="{WIDTH}" height="{height}" fill="#fdfdfa" stroke="none"/>',
           f'<text x="{WIDTH // 2}" y="20" text-anchor="middle" font-size="16">{escape(title)}</text>']
    if subtitle:
        out.append(f'<text x="{WIDTH // 2}" y="37" text-anchor="middle" fill="#555">{escape(subtitle)}</text>')
    out += legend
    for name, area, samples, x, width, depth in boxes:
        y = bottom - (depth + 1) * ROW
        label = _label(name if not area else _short(name), width)
        out.append(f'<g><title>{escape(name)}: {samples} samples, {samples / max(total, 1):.2%}</title>'
                   f'<rect x="{x:.2f}" y="{y}" width="{width:.2f}" height="{ROW - 1}" '
                   f'fill="{COLOURS.get(area, ROOT_COLOUR)}"/>'
                   + (f'<text x="{x + 3:.2f}" y="{y + ROW - 4}">{escape(label)}</text>' if label else "")
                   + "</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
