#!/usr/bin/env python3
"""Fails when a product source includes a folder above its own (docs/architecture.md, "Layout").

Each folder may include itself and the folders listed for it; some may include only named headers
of a folder (a metadata client, the log codec). A composition root (a binary's main.cc, the
autoscaler's builtin_providers.cc) may include any product folder. Tests and benchmarks may include
anything. Prints each include that breaks the rule as FILE:LINE: and exits 1; exits 0 otherwise.

    scripts/check_layering.py           the tracked sources (git ls-files), or every source
"""
import os
import re
import subprocess
import sys

# folder -> folders (or "folder/header.h") it may include, besides itself. Lowest first.
ALLOWED = {
    "common": [],
    "bus": ["common"],
    "storage": ["bus", "common"],
    "provider": ["bus", "common"],
    "cloud_aws": ["provider", "bus", "common"],
    "cloud_gcp": ["provider", "bus", "common"],
    # The checkpoint buckets' clients sign and authorize with the clouds' credentials, nothing else.
    "object_store": ["common", "cloud_aws/sigv4.h", "cloud_aws/credentials.h", "cloud_aws/imds.h",
                     "cloud_gcp/credentials.h", "cloud_gcp/metadata.h", "cloud_gcp/jwt.h"],
    # The agent reads interruption notices with the clouds' metadata clients, nothing else.
    "agent": ["bus", "common", "cloud_aws/imds.h", "cloud_gcp/metadata.h"],
    "autoscaler": ["provider", "bus", "common"],
    # The master reads the clouds' provider sections to refuse a bad master.yaml at start.
    "master": ["storage", "provider", "object_store", "cloud_aws/aws_config.h",
               "cloud_gcp/gcp_config.h", "bus", "common"],
    # det decodes stored log chunks, and reads nothing else of storage.
    "cli": ["storage/log_chunk.h", "storage/log_line.h", "bus", "common"],
}
# Inside a folder that is a house of rooms (master/README.md, agent/README.md): its rooms, lowest
# first, and what each may use of the others. A file belongs to the longest part its path starts
# with; the files at the folder's root are the composition and may include any room. Within a
# room, a file may include its own room and the room's own parts (cluster/ its scheduler/) and
# those of the rooms listed for it, but a part only what is listed for it.
PARTS = {
    "master/auth": [],
    "master/records": [],
    "master/cluster/scheduler": [],
    "master/cluster": ["master/auth", "master/records"],
    "master/experiments/searcher": [],
    "master/experiments/experiment": ["master/experiments/searcher"],
    "master/experiments": ["master/cluster", "master/auth", "master/records"],
    "master/front": ["master/experiments", "master/cluster", "master/auth", "master/records"],
    # The agent's other two programs: the workload shim (libc only) and the docker pump.
    "agent/shim": [],
    "agent/docker": [],
}
COMPOSITION_ROOTS = {"main.cc", "autoscaler/builtin_providers.cc"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources():
    try:
        out = subprocess.run(["git", "ls-files", "*.cc", "*.h"], check=True, capture_output=True,
                             text=True).stdout.split()
        if out:
            return out
    except (OSError, subprocess.CalledProcessError):
        pass
    return [os.path.relpath(os.path.join(d, f)) for d, _, files in os.walk(".") for f in files
            if f.endswith((".cc", ".h"))]


def allowed(path, include):
    """Whether `path` (a product source) may include `include`; None when `path` is not checked."""
    folder = path.split("/", 1)[0]
    if folder not in ALLOWED:
        return None
    if os.path.basename(path) == "main.cc" or path in COMPOSITION_ROOTS:
        return True
    target = include.split("/", 1)[0]
    if "/" not in include or target not in ALLOWED:
        return True  # a generated file, a third-party header, or a non-product folder
    if target == folder:
        return allowed_inside(path, include)
    return target in ALLOWED[folder] or include in ALLOWED[folder]


def part_of(path):
    """The part `path` belongs to (the longest that contains it), or None: a folder's root."""
    parts = [p for p in PARTS if path.startswith(p + "/")]
    return max(parts, key=len) if parts else None


def allowed_inside(path, include):
    part = part_of(path)
    if part is None or not include.startswith(path.split("/", 1)[0] + "/"):
        return True
    target = part_of(include)
    if target is None:
        return False  # the composition is above every room
    return any(target == room or target.startswith(room + "/")
               for room in [part] + PARTS[part])

def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    broken = []
    for path in sources():
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE.match(line)
                if match and allowed(path, match.group(1)) is False:
                    broken.append(f"{path}:{number}: includes {match.group(1)}, above its folder")
    for line in broken:
        print(line)
    if broken:
        print(f"layering: {len(broken)} include(s) point up (docs/architecture.md, Layout)")
        return 1
    print("layering: every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
