"""The viewer layout for the tactile topics, in the layout format Lichtblick and Foxglove Studio import.

`build_layout(collection)` returns the layout as a dict in the viewers' classic layout format:
`configById` (one config per panel id `<PanelType>!<name>`), `layout` (the split tree of the
panel ids: `{"first", "second", "direction", "splitPercentage"}`), `globalVariables`,
`userNodes` and `playbackConfig`. `wuji-tactile layout` writes it to a file (*Layouts → Import
from file…* in either viewer). The panels:

- **3-D** (`3D`): the scene topic `C/view/scene`, the camera following the wrist frame `C/wrist`,
  framing the hand: 0.33 m away, near plane 1 mm, 1 cm frame axes, a 1 cm grid in `world`;
- two **plots** (`Plot`): each pad's resultant |F| and its Fy (pad frame: the normal load) from
  `C/view/resultants`;
- **force images** (`Image`, only with `images=True`): `C/view/images` with its labels
  `C/view/image_labels`, which only `sim --images` publishes and records (without that topic the
  viewer's panel would only say "Image topic does not exist");
- **raw messages** (`RawMessages`): the contract's data records on `C`.
"""
from __future__ import annotations

import json
from typing import Any

from ..contract.naming import validate_collection_id
from ..contract.pads import FINGERS

#: The panel types this layout uses (the viewers' panel type names).
PANEL_TYPES = ("3D", "Plot", "Image", "RawMessages")
#: Line colours of the five pads in the plots (thumb … pinky).
PAD_COLOURS = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4")
#: Where the camera looks, in the wrist frame [m] (OpenXR wrist frame: fingers toward −Z): chosen so that
#: the wrist and the fingertips of the Wuji Hand 2 (taxels down to z ≈ −0.18 m) are both in view.
CAMERA_TARGET_M = (0.0, 0.0, -0.07)
#: Camera distance from the target [m], near and far planes [m], vertical field of view [deg].
CAMERA_DISTANCE_M, CAMERA_NEAR_M, CAMERA_FAR_M, CAMERA_FOVY_DEG = 0.33, 0.001, 10.0, 45.0
#: Length of the drawn frame axes [m].
AXIS_SCALE_M = 0.01


def _quoted(topic: str) -> str:
    """A topic in a message path: quoted, because the collection's topics have no leading slash."""
    return json.dumps(topic)


def build_layout(collection: str = "tactile/right", *, images: bool = False) -> dict[str, Any]:
    """The layout (classic format) for `collection`'s topics, with the force-images panel when
    `images`; raises `ValueError` for a bad id."""
    validate_collection_id(collection)
    view = f"{collection}/view"
    resultants = _quoted(f"{view}/resultants")
    ids = {"3d": "3D!tactile3d", "norm": "Plot!tactilenorm", "fy": "Plot!tactilefy", "images": "Image!tactileimages",
           "raw": "RawMessages!tactileraw"}

    def plot(field: str, title: str) -> dict:
        return {"foxglovePanelTitle": title,
                "paths": [{"value": f"{resultants}.{finger}.{field}", "enabled": True, "timestampMethod": "receiveTime",
                           "label": finger, "color": colour} for finger, colour in zip(FINGERS, PAD_COLOURS, strict=True)],
                "showXAxisLabels": True, "showYAxisLabels": True, "showLegend": True, "legendDisplay": "floating",
                "showPlotValuesInLegend": False, "isSynced": True, "xAxisVal": "timestamp", "sidebarDimension": 240}

    config_by_id = {
        ids["3d"]: {
            "foxglovePanelTitle": f"{collection}: taxels |f|, pad resultants, hand",
            "cameraState": {"distance": CAMERA_DISTANCE_M, "perspective": True, "phi": 80.0, "thetaOffset": 0.0,
                            "target": [0.0, 0.0, 0.0], "targetOffset": list(CAMERA_TARGET_M),
                            "targetOrientation": [0.0, 0.0, 0.0, 1.0], "fovy": CAMERA_FOVY_DEG,
                            "near": CAMERA_NEAR_M, "far": CAMERA_FAR_M},
            "followMode": "follow-pose", "followTf": f"{collection}/wrist",
            "scene": {"transforms": {"showLabel": False, "axisScale": AXIS_SCALE_M, "lineWidth": 0.5},
                      "labelScaleFactor": 1.0},
            "transforms": {},
            "topics": {f"{view}/scene": {"visible": True}},
            "layers": {"tactile-grid": {"layerId": "foxglove.Grid", "visible": True, "frameId": "world",
                                        "size": 0.5, "divisions": 50, "lineWidth": 1.0, "color": "#248eff40",
                                        "position": [0.0, 0.0, 0.0], "rotation": [0.0, 0.0, 0.0], "order": 1}},
            "publish": {"type": "point", "poseTopic": "/move_base_simple/goal", "pointTopic": "/clicked_point",
                        "poseEstimateTopic": "/initialpose", "poseEstimateXDeviation": 0.5,
                        "poseEstimateYDeviation": 0.5, "poseEstimateThetaDeviation": 0.26179939},
            "imageMode": {},
        },
        ids["norm"]: plot("norm", "pad resultant |F| [N]"),
        ids["fy"]: plot("y", "pad resultant Fy [N] (pad frame: normal load, + = pressing)"),
        ids["images"]: {"foxglovePanelTitle": "force images |value| (rows Fx Fy Fz, columns thumb … pinky)",
                        "imageMode": {"imageTopic": f"{view}/images",
                                      "annotations": {f"{view}/image_labels": {"visible": True}}}},
        ids["raw"]: {"foxglovePanelTitle": f"{collection}: contract data records",
                     "topicPath": _quoted(collection), "diffEnabled": False, "diffMethod": "custom",
                     "diffTopicPath": "", "showFullMessageForDiff": False},
    }
    if images:
        below_fy: Any = {"first": ids["images"], "second": ids["raw"], "direction": "column", "splitPercentage": 45}
    else:
        del config_by_id[ids["images"]]
        below_fy = ids["raw"]
    side = {"first": ids["norm"], "second": {"first": ids["fy"], "second": below_fy, "direction": "column",
                                             "splitPercentage": 36}, "direction": "column", "splitPercentage": 25}
    return {"configById": config_by_id, "globalVariables": {}, "userNodes": {}, "playbackConfig": {"speed": 1.0},
            "layout": {"first": ids["3d"], "second": side, "direction": "row", "splitPercentage": 58}}


def layout_json(collection: str = "tactile/right", *, images: bool = False) -> str:
    """`build_layout(collection, images=images)` as the text of a layout file (indented, newline-terminated)."""
    return json.dumps(build_layout(collection, images=images), indent=2, ensure_ascii=False) + "\n"


def panel_ids(tree: Any) -> list[str]:
    """The panel ids in a layout's split tree, left to right."""
    if isinstance(tree, str):
        return [tree]
    return panel_ids(tree["first"]) + panel_ids(tree["second"])


__all__ = ["build_layout", "layout_json", "panel_ids", "PANEL_TYPES", "CAMERA_TARGET_M", "AXIS_SCALE_M"]
