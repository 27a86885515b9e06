"""The machine's lines at the head of the summary: GPUs, CPUs, memory, /tmp, the host's memory
layout (which bounds a staged load: CPU copy and DMA share it), and .gpu/MANIFEST."""

import glob
import os
import socket
import time

from .core import nproc, text_lines

QUERY = ("--query-gpu=name,memory.total,memory.used,driver_version,clocks.sm,"
         "pcie.link.gen.current,pcie.link.width.current")


def machine(c):
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    c.say(f"== machine: {socket.gethostname()} {stamp}")
    c.tee(text_lines(c.capture(["nvidia-smi", QUERY, "--format=csv,noheader"], stderr="out")))
    c.say(f"cpus {nproc()}; mem {memory()}; /tmp free {tmp_free(c)}")
    l3 = c.capture(["getconf", "LEVEL3_CACHE_SIZE"], stderr="null").rstrip("\n")
    nodes = len(glob.glob("/sys/devices/system/node/node*"))
    thp = first_line("/sys/kernel/mm/transparent_hugepage/enabled")
    c.say(f"cpu: {cpu_model()}; L3 {l3} B; NUMA nodes {nodes}; GPU's NUMA node {gpu_numa_node(c)};"
          f" THP {thp}")
    if os.path.isfile(f"{c.gpu}/MANIFEST"):
        c.tee(c.lines(f"{c.gpu}/MANIFEST")[:2])


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def first_line(path):
    """$(cat PATH 2>/dev/null)."""
    return (read_text(path) or "").rstrip("\n")


def memory():
    for line in text_lines(read_text("/proc/meminfo") or ""):
        if "MemTotal" in line:
            return f"{int(line.split()[1]) / 1048576:.0f} GiB"
    return ""


def tmp_free(c):
    """The Avail column of `df -h /tmp`."""
    lines = text_lines(c.capture(["df", "-h", "/tmp"]))
    fields = lines[1].split() if len(lines) > 1 else []
    return fields[3] if len(fields) > 3 else ""


def cpu_model():
    for line in text_lines(read_text("/proc/cpuinfo") or ""):
        if line.startswith("model name"):
            parts = line.split(": ")
            return parts[1] if len(parts) > 1 else ""
    return ""


def gpu_numa_node(c):
    """The first GPU's PCI device's numa_node, or '?'."""
    ids = text_lines(c.capture(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader"],
                               stderr="null"))
    bus = ids[0][-12:].lower() if ids else ""
    node = read_text(f"/sys/bus/pci/devices/{bus}/numa_node")
    return "?" if node is None else node.rstrip("\n")
