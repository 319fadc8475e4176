"""The options iolab hands to the tools that build a set-up, classified: an allow-list.

A set-up's `mkfs_options` and `mount_options` are free text; a word of them reaches mkfs or
mount only when this table knows it: the option (per tool, and for mount per filesystem),
whether it takes a value, and what the value may be (a number, a size, a word from a set, a
label, a list of features, NAME=VALUE sub-options). Anything else is refused in one line
naming the option and what to do: a path or a device (iolab names the devices itself), `--`,
a shell character, an option that reads or writes another file or device (`mkfs.xfs -l
logdev=`, `mkfs.ext4 -d`, `mkfs.btrfs --rootdir`, `mount -o device=`), an option iolab sets
itself, and any option the table does not know. The options iolab writes itself into mdadm's
and lvcreate's argv are checked against the same kind of table where that argv is built.

The plan checks a set-up with `check` (a file:line message); `mkfs_args`, `mount_args`,
`mdadm_args` and `lvcreate_args` check again where each argv is built.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from iolab import layouts
from iolab.errors import ToolOptionError
from iolab.model import Layout

ValueKind = Literal["number", "decimal", "size", "word", "name", "label", "features", "sub"]
_FORMS = {
    "number": re.compile(r"[0-9]{1,12}"),
    "decimal": re.compile(r"[0-9]{1,3}(\.[0-9]{1,3})?"),
    "size": re.compile(r"[0-9]{1,15}([kmgtpe](i?b)?|[sb])?", re.IGNORECASE),
    "name": re.compile(r"[a-z0-9][a-z0-9-]{0,31}"),
    "label": re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]{0,63}"),
}
_SAID = {
    "number": "a whole number (e.g. 8)",
    "decimal": "a number (e.g. 1 or 0.5)",
    "size": "a size (e.g. 4096, 64k, 1m)",
    "name": "a name of lower-case letters, digits and '-'",
    "label": "a label of letters, digits, '_', '.' and '-' (at most 64)",
}
_SHELL = frozenset(";|&$`<>(){}[]*?!~#\"'\\ ")


@dataclass(frozen=True)
class Value:
    """What an option's value may be: a number, a size, a word of `words`, a name, a label, a
    list of `words` features (each may start with ^ to turn it off), or NAME[=VALUE]
    sub-options (`sub`: each name's value, None for a bare name; `refused`: names refused,
    with why)."""

    kind: ValueKind
    words: tuple[str, ...] = ()
    sub: Mapping[str, Value | None] = field(default_factory=dict)
    refused: Mapping[str, str] = field(default_factory=dict)
    shown: str = ""  # how messages and docs/setups.md say it, where the words are many


@dataclass(frozen=True)
class Tool:
    """One tool's options: each option -> its value (None: a flag without one), the options
    refused with why, and other spellings of an option (--force: -f)."""

    name: str
    options: Mapping[str, Value | None]
    refused: Mapping[str, str] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)


NUMBER, DECIMAL, SIZE = Value("number"), Value("decimal"), Value("size")
NAME, LABEL = Value("name"), Value("label")


def _words(*words: str) -> Value:
    return Value("word", words)


def _sub(sub: Mapping[str, Value | None], refused: Mapping[str, str] | None = None) -> Value:
    return Value("sub", sub=sub, refused=refused or {})


BIT = _words("0", "1")
_A_FILE = "it names a file or a device; iolab names the set-up's devices itself"
_A_DIR = "it copies a directory into the filesystem; iolab builds it empty"
_PRINTS = "it only prints and builds nothing; leave it out"

MKFS_XFS = Tool(
    "mkfs.xfs",
    {
        "-f": None,
        "-K": None,
        "-q": None,
        "-b": _sub({"size": SIZE}),
        "-d": _sub(
            {
                "su": SIZE,
                "sw": NUMBER,
                "sunit": NUMBER,
                "swidth": NUMBER,
                "agcount": NUMBER,
                "agsize": SIZE,
                "size": SIZE,
                "noalign": None,
            },
            {"file": _A_FILE, "name": _A_FILE},
        ),
        "-i": _sub(
            {
                "size": SIZE,
                "maxpct": NUMBER,
                "align": BIT,
                "sparse": BIT,
                "attr": _words("1", "2"),
                "projid32bit": BIT,
                "perblock": NUMBER,
                "nrext64": BIT,
            }
        ),
        "-l": _sub(
            {
                "size": SIZE,
                "version": _words("1", "2"),
                "sunit": NUMBER,
                "su": SIZE,
                "lazy-count": BIT,
                "internal": _words("1"),
            },
            {"logdev": _A_FILE, "file": _A_FILE, "name": _A_FILE},
        ),
        "-m": _sub(
            {
                "crc": BIT,
                "finobt": BIT,
                "reflink": BIT,
                "rmapbt": BIT,
                "bigtime": BIT,
                "inobtcount": BIT,
            }
        ),
        "-n": _sub({"size": SIZE, "version": _words("2", "ci"), "ftype": BIT}),
        "-s": _sub({"size": SIZE}),
        "-L": LABEL,
    },
    {
        "-p": "it reads a prototype file",
        "-c": "it reads a configuration file",
        "-r": "it puts a realtime section on another device",
        "-N": _PRINTS,
        "-V": _PRINTS,
    },
)

_EXT4_FEATURES = (
    "has_journal",
    "ext_attr",
    "resize_inode",
    "dir_index",
    "filetype",
    "sparse_super",
    "sparse_super2",
    "large_file",
    "huge_file",
    "uninit_bg",
    "dir_nlink",
    "extra_isize",
    "extent",
    "extents",
    "flex_bg",
    "64bit",
    "mmp",
    "bigalloc",
    "metadata_csum",
    "metadata_csum_seed",
    "inline_data",
    "quota",
    "project",
    "encrypt",
    "casefold",
    "large_dir",
    "ea_inode",
    "stable_inodes",
    "verity",
    "orphan_file",
    "fast_commit",
    "meta_bg",
    "none",
)
MKFS_EXT4 = Tool(
    "mkfs.ext4",
    {
        "-F": None,
        "-q": None,
        "-j": None,
        "-K": None,
        "-b": SIZE,
        "-C": SIZE,
        "-I": NUMBER,
        "-i": NUMBER,
        "-N": NUMBER,
        "-m": DECIMAL,
        "-g": NUMBER,
        "-G": NUMBER,
        "-r": BIT,
        "-L": LABEL,
        "-T": _words(
            "default", "floppy", "small", "big", "huge", "news", "largefile", "largefile4", "hurd"
        ),
        "-O": Value("features", _EXT4_FEATURES),
        "-E": _sub(
            {
                "stride": NUMBER,
                "stripe_width": NUMBER,
                "stripe-width": NUMBER,
                "lazy_itable_init": BIT,
                "lazy_journal_init": BIT,
                "discard": None,
                "nodiscard": None,
                "packed_meta_blocks": BIT,
                "num_backup_sb": _words("0", "1", "2"),
                "resize": NUMBER,
                "test_fs": None,
                "assume_storage_prezeroed": BIT,
            },
            {
                "offset": "it puts the filesystem at an offset iolab does not check",
                "root_owner": "it sets the owner of the root directory; leave it out",
            },
        ),
        "-J": _sub(
            {"size": NUMBER, "fast_commit_size": NUMBER},
            {"device": "it puts the journal on another device"},
        ),
        "-e": _words("continue", "remount-ro", "panic"),
    },
    {
        "-d": _A_DIR,
        "-l": "it reads a list of bad blocks from a file",
        "-z": "it writes an undo file",
        "-S": "it writes superblocks over an existing filesystem",
        "-n": _PRINTS,
        "-V": _PRINTS,
        "-t": "iolab picks the tool from filesystem; leave it out",
    },
)

_PROFILES = tuple(layouts.RAIDS["btrfs"].levels)
MKFS_BTRFS = Tool(
    "mkfs.btrfs",
    {
        "-f": None,
        "-K": None,
        "-q": None,
        "-M": None,
        "-d": _words(*_PROFILES),
        "-m": _words(*_PROFILES),
        "-n": SIZE,
        "-s": SIZE,
        "-b": SIZE,
        "-L": LABEL,
        "-O": Value(
            "features",
            (
                "mixed-bg",
                "extref",
                "raid56",
                "skinny-metadata",
                "no-holes",
                "raid1c34",
                "zoned",
                "quota",
                "free-space-tree",
                "block-group-tree",
                "squota",
                "raid-stripe-tree",
            ),
        ),
        "-R": Value("features", ("quota", "free-space-tree")),
        "--checksum": _words("crc32c", "xxhash", "sha256", "blake2"),
    },
    {
        "-r": _A_DIR,
        "--rootdir": _A_DIR,
        "--shrink": _A_DIR,
        "-V": _PRINTS,
        "--version": _PRINTS,
        "--help": _PRINTS,
    },
    {
        "--force": "-f",
        "--nodiscard": "-K",
        "--quiet": "-q",
        "--mixed": "-M",
        "--data": "-d",
        "--metadata": "-m",
        "--nodesize": "-n",
        "--sectorsize": "-s",
        "--byte-count": "-b",
        "--label": "-L",
        "--features": "-O",
        "--runtime-features": "-R",
        "--csum": "--checksum",
    },
)
MKFS: Mapping[str, Tool] = {tool.name: tool for tool in (MKFS_XFS, MKFS_EXT4, MKFS_BTRFS)}
_PROFILE_OPTIONS = ("-d", "--data", "-m", "--metadata")

_COMPRESS = Value(
    "word",
    (
        "zlib",
        "lzo",
        "zstd",
        "no",
        "none",
        *(f"zlib:{n}" for n in range(1, 10)),
        *(f"zstd:{n}" for n in range(1, 16)),
    ),
    shown="one of zlib, lzo, zstd, no, none, zlib:1 to zlib:9, zstd:1 to zstd:15",
)
MOUNT_COMMON: dict[str, Value | None] = {
    **dict.fromkeys(
        (
            "defaults",
            "rw",
            "async",
            "sync",
            "dirsync",
            "atime",
            "noatime",
            "diratime",
            "nodiratime",
            "relatime",
            "norelatime",
            "strictatime",
            "nostrictatime",
            "lazytime",
            "nolazytime",
            "iversion",
            "noiversion",
            "discard",
            "nodiscard",
        )
    ),
}
MOUNT_OPTIONS: Mapping[str, dict[str, Value | None]] = {
    "xfs": {
        **dict.fromkeys(
            (
                "inode64",
                "inode32",
                "largeio",
                "nolargeio",
                "swalloc",
                "noalign",
                "wsync",
                "attr2",
                "noattr2",
                "ikeep",
                "noikeep",
                "filestreams",
                "grpid",
                "nogrpid",
                "bsdgroups",
                "sysvgroups",
                "noquota",
            )
        ),
        "logbufs": NUMBER,
        "logbsize": SIZE,
        "allocsize": SIZE,
        "sunit": NUMBER,
        "swidth": NUMBER,
        "dax": _words("always", "never", "inode"),
    },
    "ext4": {
        **dict.fromkeys(
            (
                "barrier",
                "nobarrier",
                "delalloc",
                "nodelalloc",
                "journal_checksum",
                "nojournal_checksum",
                "journal_async_commit",
                "auto_da_alloc",
                "noauto_da_alloc",
                "dioread_nolock",
                "dioread_lock",
                "block_validity",
                "noblock_validity",
                "noinit_itable",
                "i_version",
                "user_xattr",
                "nouser_xattr",
                "acl",
                "noacl",
                "dax",
            )
        ),
        "data": _words("ordered", "writeback", "journal"),
        "commit": NUMBER,
        "barrier": BIT,
        "stripe": NUMBER,
        "inode_readahead_blks": NUMBER,
        "max_batch_time": NUMBER,
        "min_batch_time": NUMBER,
        "journal_ioprio": NUMBER,
        "init_itable": NUMBER,
        "errors": _words("continue", "remount-ro", "panic"),
        "dax": _words("always", "never", "inode"),
    },
    "btrfs": {
        **dict.fromkeys(
            (
                "ssd",
                "nossd",
                "ssd_spread",
                "nossd_spread",
                "space_cache",
                "nospace_cache",
                "clear_cache",
                "autodefrag",
                "noautodefrag",
                "nodatacow",
                "datacow",
                "nodatasum",
                "datasum",
                "flushoncommit",
                "noflushoncommit",
                "barrier",
                "nobarrier",
                "treelog",
                "notreelog",
                "skip_balance",
                "enospc_debug",
                "noenospc_debug",
            )
        ),
        "compress": _COMPRESS,
        "compress-force": _COMPRESS,
        "space_cache": _words("v1", "v2"),
        "commit": NUMBER,
        "discard": _words("sync", "async"),
        "thread_pool": NUMBER,
        "max_inline": SIZE,
        "fatal_errors": _words("bug", "panic"),
    },
}
# A mount option may be both bare and NAME=VALUE ("barrier", "barrier=1"): the bare ones.
MOUNT_BARE: Mapping[str, frozenset[str]] = {
    "ext4": frozenset(("barrier", "dax")),
    "btrfs": frozenset(("space_cache", "discard")),
}
MOUNT_REFUSED = {
    "device": _A_FILE,
    "logdev": _A_FILE,
    "rtdev": _A_FILE,
    "journal_path": _A_FILE,
    "journal_dev": _A_FILE,
    "subvol": "it mounts a part of the filesystem; iolab mounts it whole",
    "subvolid": "it mounts a part of the filesystem; iolab mounts it whole",
    "ro": "fio writes the test file; a read-only mount cannot hold it",
    "loop": _A_FILE,
    "bind": "iolab mounts the set-up's own filesystem",
}

MDADM = Tool(
    "mdadm",
    {
        "--run": None,
        "--assume-clean": None,
        "--metadata": _words("1.2", "1.1", "1.0", "0.90"),
        "--level": _words(*layouts.RAIDS["mdadm"].levels),
        "--raid-devices": NUMBER,
        "--chunk": NUMBER,
        "--layout": NAME,
        "--bitmap": _words("none", "internal"),
        "--consistency-policy": _words("resync", "bitmap", "ppl"),
    },
    {"--write-journal": _A_FILE, "--backup-file": _A_FILE, "--config": _A_FILE},
)
LVCREATE = Tool(
    "lvcreate",
    {
        "--yes": None,
        "--nosync": None,
        "--wipesignatures": _words("y", "n"),
        "--name": LABEL,
        "--extents": _words("100%FREE"),
        "--type": _words("linear", "striped", "raid1", "raid4", "raid5", "raid6", "raid10"),
        "--stripes": NUMBER,
        "--stripesize": SIZE,
        "--mirrors": NUMBER,
    },
    aliases={
        "-y": "--yes",
        "-W": "--wipesignatures",
        "-n": "--name",
        "-l": "--extents",
        "-i": "--stripes",
        "-I": "--stripesize",
        "-m": "--mirrors",
    },
)
TOOLS: Mapping[str, Tool] = {**MKFS, "mdadm": MDADM, "lvcreate": LVCREATE}


# -- checking ---------------------------------------------------------------------------------


def check_tool_options(layout: Layout) -> None:
    """A set-up's free-text options, as the plan loads it: ToolOptionError for the first word
    the tables refuse."""
    if layouts.mkfs_tool(layout) is not None:
        mkfs_args(layout)
    if layouts.mounted(layout):
        mount_args(layout)


def mkfs_args(layout: Layout) -> list[str]:
    """The layout's mkfs_options as the words mkfs gets, each one the table allows."""
    tool = layouts.mkfs_tool(layout)
    if tool is None:
        return []
    words = layouts.words(layout.mkfs_options, tool, "mkfs_options")
    parsed = parse(MKFS[tool], words, "mkfs_options")
    if layout.raid == "btrfs":
        for option, _ in parsed:
            if option in _PROFILE_OPTIONS:
                raise ToolOptionError(
                    "mkfs_options",
                    tool,
                    option,
                    "is the set-up's level or metadata; set level = or metadata = instead",
                )
    return words


def mount_args(layout: Layout) -> list[str]:
    """The layout's mount_options as mount's `-o LIST`, each option the table allows for the
    filesystem ("noatime,logbufs=8", "noatime logbufs=8" and "-o noatime,logbufs=8" alike)."""
    fs = "btrfs" if layouts.is_btrfs(layout) else layout.filesystem
    words = layouts.words(layout.mount_options, "mount", "mount_options")
    listed = mount_list(words)
    for item in listed:
        _mount_option(item, fs)
    return ["-o", ",".join(listed)] if listed else []


def mdadm_args(options: Sequence[str]) -> list[str]:
    """The options iolab puts after `mdadm --create MD`, checked against MDADM."""
    parse(MDADM, options, "md_layout")
    return list(options)


def lvcreate_args(options: Sequence[str]) -> list[str]:
    """The options iolab gives lvcreate before the volume group, checked against LVCREATE."""
    parse(LVCREATE, options, "chunk")
    return list(options)


def parse(tool: Tool, words: Sequence[str], key: str) -> list[tuple[str, str | None]]:
    """(option, value) for each option in `words`; ToolOptionError for the first word the
    tool's table refuses."""
    found: list[tuple[str, str | None]] = []
    index = 0
    while index < len(words):
        word = words[index]
        _plain(word, tool.name, key)
        name, attached = _split(word)
        spec = _known(tool, name, key)
        value = attached
        if spec is not None and value is None:
            index += 1
            if index == len(words) or words[index].startswith("-"):
                raise ToolOptionError(key, tool.name, name, f"needs a value: {_say(spec)}")
            value = words[index]
            _plain(value, tool.name, key)
        if spec is None and value is not None:
            raise ToolOptionError(key, tool.name, word, "takes no value; write it alone")
        if spec is not None and value is not None:
            _value(spec, value, tool.name, key, name)
        found.append((name, value))
        index += 1
    return found


def mount_list(words: Sequence[str]) -> list[str]:
    """The mount options in mount_options' words: `-o LIST` or bare lists, comma-separated."""
    listed: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        _plain(word, "mount", "mount_options")
        if word == "-o":
            index += 1
            if index == len(words):
                raise ToolOptionError("mount_options", "mount", "-o", "needs a list of options")
            word = words[index]
            _plain(word, "mount", "mount_options")
        elif word.startswith("-"):
            raise ToolOptionError(
                "mount_options",
                "mount",
                word,
                'is not -o; mount_options take mount -o options only, e.g. "noatime,logbufs=8"',
            )
        listed += [item for item in word.split(",") if item]
        index += 1
    return listed


def _mount_option(item: str, fs: str) -> None:
    name, eq, value = item.partition("=")
    table = {**MOUNT_COMMON, **MOUNT_OPTIONS.get(fs, {})}
    if name in MOUNT_REFUSED:
        raise ToolOptionError("mount_options", "mount", item, _REFUSED + MOUNT_REFUSED[name])
    if name not in table:
        raise ToolOptionError(
            "mount_options",
            "mount",
            item,
            f"is not a {fs} mount option iolab passes{_guess(name, table)}; {_LISTED}",
        )
    spec = table[name]
    if not eq:
        if spec is not None and name not in MOUNT_BARE.get(fs, frozenset()):
            raise ToolOptionError("mount_options", "mount", item, f"needs a value: {_say(spec)}")
        return
    if spec is None:
        raise ToolOptionError("mount_options", "mount", item, "takes no value; write it alone")
    _value(spec, value, "mount", "mount_options", name + "=")


_LISTED = "the options iolab passes are listed in docs/setups.md (Tool options)"
_REFUSED = "is refused: "


def _plain(word: str, tool: str, key: str) -> None:
    """A word that cannot be an option: `--`, a path or device, a shell or control character."""
    if word == "--":
        raise ToolOptionError(
            key,
            tool,
            word,
            "ends the options, and what follows would name a "
            "device or file; iolab names the set-up's devices itself",
        )
    if "/" in word:
        raise ToolOptionError(
            key,
            tool,
            word,
            "names a path or a device; iolab names the set-up's devices itself, so leave it out",
        )
    odd = next((c for c in word if c in _SHELL or not c.isprintable() or not c.isascii()), None)
    if odd is not None:
        raise ToolOptionError(
            key,
            tool,
            word,
            f"holds {odd!r}, which no option iolab passes "
            f"to {tool} takes (it runs {tool} directly, never a shell)",
        )


def _split(word: str) -> tuple[str, str | None]:
    """A long option may carry its value after '=' (--data=raid1); a short one never does."""
    if word.startswith("--") and "=" in word:
        name, value = word.split("=", 1)
        return name, value
    return word, None


def _known(tool: Tool, name: str, key: str) -> Value | None:
    if not name.startswith("-"):
        raise ToolOptionError(
            key,
            tool.name,
            name,
            f"is not an option of {tool.name}; devices "
            "and files never go here, iolab names the set-up's devices "
            "itself",
        )
    if name in tool.refused:
        raise ToolOptionError(key, tool.name, name, _REFUSED + tool.refused[name])
    name = tool.aliases.get(name, name)
    if name not in tool.options:
        known = {**tool.options, **tool.aliases}
        raise ToolOptionError(
            key,
            tool.name,
            name,
            f"is not an option iolab passes to {tool.name}{_guess(name, known)}; {_LISTED}",
        )
    return tool.options[name]


def _guess(name: str, known: Mapping[str, object]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _value(spec: Value, value: str, tool: str, key: str, option: str) -> None:
    """A value that fits its option; ToolOptionError naming the option if not (`option` as
    it is written before its value: "-b", "--data=", "logbufs=")."""
    sep = "" if option.endswith("=") else " "
    if spec.kind == "sub":
        for item in value.split(","):
            _sub_option(spec, item, tool, key, option)
        return
    if spec.kind == "features":
        bad = [f for f in value.split(",") if f.removeprefix("^") not in spec.words]
        if bad:
            raise ToolOptionError(
                key,
                tool,
                f"{option}{sep}{bad[0]}",
                f"is not a feature iolab passes to {option}; {_LISTED}",
            )
        return
    if not _fits(spec, value):
        raise ToolOptionError(key, tool, f"{option}{sep}{value}", f"needs {_say(spec)}")


def _fits(spec: Value, value: str) -> bool:
    if spec.kind == "word":
        return value in spec.words
    return bool(_FORMS[spec.kind].fullmatch(value))


def _sub_option(spec: Value, item: str, tool: str, key: str, option: str) -> None:
    name, eq, value = item.partition("=")
    shown = f"{option} {item}"
    if name in spec.refused:
        raise ToolOptionError(key, tool, shown, _REFUSED + spec.refused[name])
    if name not in spec.sub:
        raise ToolOptionError(
            key,
            tool,
            shown,
            f"is not a sub-option of {option} iolab passes"
            f"{_guess(name, spec.sub)}; choose from "
            f"{', '.join(spec.sub)}",
        )
    found = spec.sub[name]
    if found is None:
        if eq:
            raise ToolOptionError(key, tool, shown, "takes no value; write it alone")
        return
    if not eq or not _fits(found, value):
        raise ToolOptionError(key, tool, shown, f"needs {name}={_say(found)}")


def _say(spec: Value) -> str:
    if spec.shown:
        return spec.shown
    if spec.kind in ("word", "features"):
        return "one of " + ", ".join(spec.words)
    if spec.kind == "sub":
        return "NAME=VALUE sub-options: " + ", ".join(spec.sub)
    return _SAID[spec.kind]
