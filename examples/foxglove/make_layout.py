"""Write the Foxglove layout for the tactile view (`tactile_view.json` next to this file, or the
path given), built with the Foxglove SDK's typed layout classes (`pip install '.[view]'`).

    python examples/foxglove/make_layout.py [OUT.json] [--collection tactile/right]

The layout: the 3-D panel following the hand's wrist frame (taxels, pad arrows, legend), two plots
(each pad's |F| and its Fy = the normal load, pad frame) and the force-image panel. Topic names are
quoted in the plot paths because the collection's topics have no leading slash.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import foxglove.layouts as fl

FINGERS = ("thumb", "index", "middle", "ring", "pinky")
COLOURS = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4")


def build(collection: str) -> fl.Layout:
    view = f"{collection}/view"
    resultants = f'"{view}/resultants"'

    def plot(field: str, title: str) -> fl.PlotPanel:
        return fl.PlotPanel(title=title, config=fl.PlotConfig(
            paths=[fl.PlotSeries(value=f"{resultants}.{finger}.{field}", label=finger, color=colour)
                   for finger, colour in zip(FINGERS, COLOURS, strict=True)],
            y_axis_label="N", show_legend=True, legend_display="top", time_range="all"))

    three_d = fl.ThreeDeePanel(title=f"{collection}: taxels |f| and pad resultants", config=fl.ThreeDeeConfig(
        follow_tf=f"{collection}/wrist", follow_mode="follow-pose",
        camera_state=fl.ThreeDeeCameraState(distance=0.45, perspective=True, phi=70.0, theta_offset=200.0,
                                            target_offset=(0.0, 0.0, -0.12)),
        topics={f"{view}/scene": fl.BaseRendererSceneUpdateTopicSettings(visible=True)}))
    images = fl.ImagePanel(title="force images |value| (rows Fx Fy Fz, columns thumb … pinky)",
                           config=fl.ImageConfig(image_mode=fl.ImageModeConfig(image_topic=f"{view}/images")))
    side = fl.SplitContainer(direction="column", items=[
        fl.SplitItem(content=plot("norm", "pad resultant |F| [N]")),
        fl.SplitItem(content=plot("y", "pad resultant Fy [N] (pad frame: normal load, + = pressing)")),
        fl.SplitItem(content=images),
    ])
    return fl.Layout(content=fl.SplitContainer(direction="row", items=[
        fl.SplitItem(proportion=3, content=three_d), fl.SplitItem(proportion=2, content=side)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(Path(__file__).with_name("tactile_view.json")))
    parser.add_argument("--collection", default="tactile/right")
    args = parser.parse_args()
    text = json.dumps(json.loads(build(args.collection).to_json()), indent=2) + "\n"
    Path(args.out).write_text(text)
    print(args.out)


if __name__ == "__main__":
    main()
