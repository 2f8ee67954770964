"""`suite data synth|prepare`: make a JPEG ImageFolder to test with, and prepare a fast cache from one."""

from __future__ import annotations

from suite.inputs import option_types


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "data",
        help="make test image folders and prepare fast caches",
        description="Image data for `suite run --data` and `suite loader`.",
    )
    sub = p.add_subparsers(dest="data_command", metavar="ACTION", parser_class=type(p))

    synth = sub.add_parser(
        "synth",
        help="write an ImageFolder of photograph-like JPEGs",
        description="Write COUNT photograph-like JPEGs into OUT/class_NNN/ (deterministic for a seed).",
    )
    synth.add_argument(
        "--out", required=True, type=option_types.output_folder("--out"), help="a new folder to write"
    )
    synth.add_argument("--count", required=True, help="how many images")
    synth.add_argument("--size", default="480x360", help="WIDTHxHEIGHT (default 480x360, the seed's photos)")
    synth.add_argument("--classes", default="1", help="class sub-folders, images spread evenly (default 1)")
    synth.add_argument("--seed", default="0", help="content seed (default 0)")
    synth.set_defaults(func=synth_command)

    prep = sub.add_parser(
        "prepare",
        help="decode, resize and crop a folder once into a memory-mappable cache",
        description="Out-of-band preprocessing: decode every image of SRC once, resize and "
        "centre-crop it to SIZE px, and store uint8 arrays in OUT for `--data OUT`. "
        "Unreadable images are skipped and listed in OUT/manifest.json.",
    )
    prep.add_argument("src", metavar="SRC", help="a folder of class sub-folders of images")
    prep.add_argument("--size", required=True, help="image side in pixels (the workload's, e.g. 64)")
    prep.add_argument(
        "--out", required=True, type=option_types.output_folder("--out"), help="the cache folder to create"
    )
    prep.add_argument("--workers", help="decoding processes (default: all cores)")
    prep.add_argument("--force", action="store_true", help="replace a cache already at OUT")
    prep.set_defaults(func=prepare_command)
    p.set_defaults(func=lambda args: _usage(p))


def _usage(parser) -> int:
    parser.print_help()
    return 2


def synth_command(args) -> int:
    from suite.data.synth import synthesize
    from suite.inputs.numbers import non_negative_int

    summary = synthesize(
        args.out,
        args.count,
        size=args.size,
        classes=args.classes,
        seed=non_negative_int("--seed", args.seed, most=2**32 - 1),
    )
    print(
        f"wrote {summary['count']:,} JPEGs of {summary['width']}x{summary['height']} in "
        f"{summary['classes']} class(es) to {summary['path']} ({summary['bytes'] / 1e6:,.1f} MB)"
    )
    return 0


def prepare_command(args) -> int:
    from suite.data.prepare import prepare
    from suite.inputs.numbers import positive_int

    workers = positive_int("--workers", args.workers) if args.workers is not None else None
    manifest = prepare(args.src, args.size, args.out, workers=workers, force=args.force)
    if manifest.get("up_to_date"):
        print(
            f"{args.out} is up to date ({manifest['count']:,} images of {manifest['image_size']} px from "
            f"the same source); nothing to do"
        )
        return 0
    size_bytes = manifest["count"] * 3 * manifest["image_size"] ** 2
    print(
        f"prepared {manifest['count']:,} images of {manifest['image_size']} px into {args.out} "
        f"({size_bytes / 1e6:,.1f} MB, from {manifest['source_bytes'] / 1e6:,.1f} MB of source images)"
    )
    if manifest["skipped_count"]:
        listed = ", ".join(item["path"] for item in manifest["skipped"][:5])
        more = f" and {manifest['skipped_count'] - 5} more" if manifest["skipped_count"] > 5 else ""
        print(
            f"skipped {manifest['skipped_count']} unreadable image(s): {listed}{more} "
            f"(listed in {args.out}/manifest.json)"
        )
    return 0
