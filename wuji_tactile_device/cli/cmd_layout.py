"""`wuji-tactile layout`: write the viewer layout (Lichtblick / Foxglove Studio, *Layouts → Import
from file…*) for a collection's topics: 3-D scene, pad resultant plots, raw records, and the force
images where they are published (`sim --images`)."""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import TactileError
from .args import existing_file, output_file


def register(subparsers) -> None:
    p = subparsers.add_parser("layout", help="write the Lichtblick/Foxglove layout for a collection's topics",
                              description="Write the viewer layout (the classic layout format Lichtblick and "
                                          "Foxglove Studio import: Layouts → Import from file…) for one "
                                          "collection: the 3-D scene framing the hand, the pad resultant plots, "
                                          "the raw contract records and, with --images (or for a --recording "
                                          "that has them), the force images. Without -o the layout is printed.")
    p.add_argument("--collection", metavar="ID",
                   help="collection id whose topics the layout shows (default: the --recording's only "
                        "collection, else tactile/right)")
    p.add_argument("--recording", metavar="FILE.mcap", type=existing_file,
                   help="a recording the layout is for: its collection is checked (or taken when it has one)")
    p.add_argument("--images", action=argparse.BooleanOptionalAction, default=None,
                   help="add the force-images panel (the topic C/view/images, published and recorded by "
                        "`sim --images`); default: only when the --recording has that topic")
    p.add_argument("-o", "--output", metavar="FILE.json", type=output_file, help="write the layout to this file")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output file")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..integrations.viewer_layout import layout_json

    topics: frozenset[str] | None = None  # the recording's, when there is one
    if args.recording is not None:
        from ..recording import McapReplay

        replay = McapReplay(args.recording)
        try:
            held = list(replay.collections)
            topics = replay.topics
        finally:
            replay.close()
        if args.collection is None:
            if len(held) != 1:
                raise TactileError(f"{args.recording}: holds {len(held)} collections ({', '.join(held) or 'none'}); "
                                   "choose one with --collection")
            args.collection = held[0]
        elif args.collection not in held:
            raise TactileError(f"{args.recording} has no collection {args.collection!r} "
                               f"(its collections: {', '.join(held) or 'none'})")
    if args.collection is None:
        args.collection = "tactile/right"
    images_topic = f"{args.collection}/view/images"
    images = args.images if args.images is not None else topics is not None and images_topic in topics
    if images and topics is not None and images_topic not in topics:
        raise TactileError(f"{args.recording} has no force images ({images_topic!r}: record with `sim --images`); "
                           "drop --images")
    try:
        text = layout_json(args.collection, images=images)
    except ValueError as exc:
        raise TactileError(f"layout: collection {args.collection!r}: {exc}") from exc
    if args.output is None:
        sys.stdout.write(text)
        return 0
    if os.path.exists(args.output) and not args.overwrite:
        raise TactileError(f"{args.output} already exists (use --overwrite to replace it)")
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {args.output} (layout for {args.collection}{', with force images' if images else ''}; "
          "Layouts → Import from file…)", file=sys.stderr)
    return 0
