"""Flame graphs drawn from sampled stacks, innermost frame first (no recording read)."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

from herald_load.bench import profile
from herald_load.bench.flamegraph import CHAR, COLOURS, ROW, WIDTH, svg

SVG = "{http://www.w3.org/2000/svg}"
HERALD = "dev.herald.gateway.fcm.FcmClient.send(Message)"
EPOLL = "io.netty.channel.epoll.Native.epollWait(FileDescriptor, long, int, int)"
RUN = "java.lang.Thread.run()"
# Four samples: Thread.run on three, Herald's frame on two.
STACKS = [[HERALD, RUN], [HERALD, RUN], [EPOLL, RUN], ["reactor.core.publisher.Mono.subscribe()"]]


def boxes(document: str) -> list[tuple[str, dict, str]]:
    """(frame, the rectangle's attributes, its label or "") for every rectangle of the graph."""
    found = []
    for group in ET.fromstring(document).iter(f"{SVG}g"):
        label = group.find(f"{SVG}text")
        found.append((group.find(f"{SVG}title").text.rpartition(": ")[0], group.find(f"{SVG}rect").attrib,
                      "" if label is None else label.text))
    return found


def box(document: str, frame: str) -> dict:
    return next(rect for name, rect, _ in boxes(document) if name == frame)


def test_widths_are_shares_of_the_root_and_the_root_is_at_the_bottom():
    document = svg(STACKS, "Fan-out: gateway", "4 CPU samples")
    root = box(document, "all (4 samples)")

    assert float(root["width"]) == WIDTH - 20
    assert abs(float(box(document, HERALD)["width"]) - float(root["width"]) / 2) < 0.01
    assert abs(float(box(document, RUN)["width"]) - float(root["width"]) * 3 / 4) < 0.01
    assert float(box(document, RUN)["y"]) == float(root["y"]) - ROW
    assert float(box(document, HERALD)["y"]) == float(root["y"]) - 2 * ROW
    assert all(float(rect["y"]) <= float(root["y"]) for _, rect, _ in boxes(document))
    assert "<title>dev.herald.gateway.fcm.FcmClient.send(Message): 2 samples, 50.00%</title>" in document


def test_frames_with_markup_characters_are_escaped():
    frames = ["dev.herald.Store.<init>(Map<String, List<Device>>)", "a.B$1.c(int) & more", RUN]

    document = svg([frames], "Accept: <dispatcher> & co", "subtitle with <angle> & ampersand")

    assert {name for name, _, _ in boxes(document)} == {"all (1 samples)", *frames}
    assert "&lt;init&gt;(Map&lt;String, List&lt;Device&gt;&gt;)" in document
    assert "<init>" not in document and " & " not in document
    assert ET.fromstring(document).find(f"{SVG}text").text == "Accept: <dispatcher> & co"


def test_the_same_stacks_in_any_order_give_the_same_bytes_with_siblings_alphabetical():
    stacks = STACKS * 5 + [["b.B.b()", "z.Z.z()"]] * 7 + [["a.A.a()", "z.Z.z()"]]
    shuffled = stacks[:]
    random.Random(7).shuffle(shuffled)

    document = svg(stacks, "t")

    assert svg(shuffled, "t") == document
    assert float(box(document, "a.A.a()")["x"]) < float(box(document, "b.B.b()")["x"])   # fewer samples, still first
    assert float(box(document, "java.lang.Thread.run()")["x"]) < float(box(document, "z.Z.z()")["x"])


def test_nodes_under_a_thousandth_of_the_samples_are_left_out_with_what_is_above_them():
    deep = ["x.Deep.f()"] * 10 + ["x.Rare.g()"]
    common = [[HERALD, RUN]] * 2000

    dropped = svg(common + [deep], "t")
    kept = svg(common[:998] + [deep], "t")

    assert {name for name, _, _ in boxes(dropped)} == {"all (2001 samples)", HERALD, RUN}
    assert "x.Rare.g()" in {name for name, _, _ in boxes(kept)}
    assert ET.fromstring(dropped).get("height") == svg(common, "t").split('height="')[1].split('"')[0]


def test_the_height_grows_one_row_per_frame_of_the_deepest_stack():
    def height(depth: int) -> int:
        return int(ET.fromstring(svg([[f"p.C.f{i}()" for i in range(depth)]], "t")).get("height"))

    assert height(5) - height(3) == 2 * ROW
    assert height(64) - height(1) == 63 * ROW


def test_colours_follow_the_area_and_herald_stands_out():
    document = svg(STACKS, "t")

    assert box(document, HERALD)["fill"] == COLOURS["Herald"]
    assert box(document, EPOLL)["fill"] == COLOURS["Netty"]
    assert box(document, RUN)["fill"] == COLOURS["JDK"]
    assert list(COLOURS.values()).count(COLOURS["Herald"]) == 1
    assert {label for _, label in profile.AREAS} | {"other"} == set(COLOURS)


def test_labels_are_class_and_method_cut_to_fit_their_rectangle_and_left_out_when_too_narrow():
    narrow = "dev.herald.gateway.delivery.BatchDelivery.send(BatchDelivery$Work, int)"
    stacks = [[narrow, "w.Wide.run()"]] * 10 + [["w.Wide.run()"]] * 90 + [["t.Tiny.x()"]]

    labels = {name: (label, float(rect["width"])) for name, rect, label in boxes(svg(stacks, "t"))}

    assert labels["w.Wide.run()"][0] == "Wide.run"
    label, width = labels[narrow]
    assert label.endswith("..") and "BatchDelivery.send".startswith(label[:-2]) and len(label) * CHAR <= width
    assert labels["t.Tiny.x()"][0] == ""


def test_no_samples_still_make_a_picture():
    document = svg([], "Import: dispatcher")

    assert [name for name, _, _ in boxes(document)] == ["all (0 samples)"]
