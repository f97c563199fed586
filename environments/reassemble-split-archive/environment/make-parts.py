"""Create a split dataset.tar.xz with a damaged transfer copy and a partial mirror."""
import hashlib
import io
import os
import random
import subprocess
import tarfile

rng = random.Random(9001)
PART = 40 * 1024


def member(tar, name, data, mode=0o644, mtime=1710000000):
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, mtime
    info.uname = info.gname = "data"
    info.uid = info.gid = 1500
    tar.addfile(info, io.BytesIO(data))


buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
    for d in ("dataset/", "dataset/images/", "dataset/labels/"):
        info = tarfile.TarInfo(d)
        info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1710000000
        tar.addfile(info)
    member(tar, "dataset/README.txt", b"Sensor dataset v3\n40 images, 40 label files.\n")
    for i in range(40):
        member(tar, f"dataset/images/img_{i:03d}.bin",
               bytes(rng.randrange(256) for _ in range(9000)), mtime=1710000000 + i)
        label = "\n".join(f"{rng.random():.6f},{rng.random():.6f}" for _ in range(30)) + "\n"
        member(tar, f"dataset/labels/img_{i:03d}.csv", label.encode(), mtime=1710000000 + i)
    member(tar, "dataset/tools/convert.sh", b"#!/bin/sh\necho convert\n", mode=0o755)
    info = tarfile.TarInfo("dataset/LATEST")
    info.type, info.linkname, info.mtime = tarfile.SYMTYPE, "README.txt", 1710000000
    tar.addfile(info)
archive = subprocess.run(["xz", "-6", "-c"], input=buf.getvalue(), capture_output=True,
                         check=True).stdout
parts = [archive[i:i + PART] for i in range(0, len(archive), PART)]
names = [f"dataset.tar.xz.part{i:02d}" for i in range(len(parts))]

os.makedirs("/app/transfer")
os.makedirs("/app/mirror")
with open("/app/transfer/MANIFEST.sha256", "w") as f:
    for name, data in zip(names, parts):
        f.write(f"{hashlib.sha256(data).hexdigest()}  {name}\n")
    f.write(f"{hashlib.sha256(archive).hexdigest()}  dataset.tar.xz\n")


def put(directory, name, data):
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


for i, (name, data) in enumerate(zip(names, parts)):
    if i == 3:
        bad = bytearray(data)
        bad[1234] ^= 0x40
        put("/app/transfer", name, bytes(bad))
    elif i == 5:
        pass  # never arrived
    elif i == 6:
        put("/app/transfer", name, data[:-4096])
    else:
        put("/app/transfer", name, data)
# The mirror holds some parts: good copies of 3, 5 and 6, a damaged copy of 1, and junk.
for i in (3, 5, 6):
    put("/app/mirror", names[i], parts[i])
bad1 = bytearray(parts[1])
bad1[10] ^= 0x01
put("/app/mirror", names[1], bytes(bad1))
put("/app/mirror", names[5] + ".partial", parts[5][:1000])
print(len(parts), "parts")
