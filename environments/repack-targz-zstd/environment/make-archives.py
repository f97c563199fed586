"""Create /app/archives: three good .tar.gz/.tgz archives and two damaged ones."""
import gzip
import io
import os
import random
import tarfile

rng = random.Random(424242)
OUT = "/app/archives"
os.makedirs(OUT, exist_ok=True)


def add_file(tar, name, data, mode=0o644, mtime=1700000000, user=("www", 33)):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = mtime
    info.uname, info.uid = user
    info.gname, info.gid = user
    tar.addfile(info, io.BytesIO(data))


def add_dir(tar, name, mtime=1700000000):
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    info.mtime = mtime
    tar.addfile(info)


def add_link(tar, name, target):
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    info.mtime = 1700000500
    tar.addfile(info)


def text(n):
    words = ["lorem", "ipsum", "dolor", "sit", "amet", "stock", "order", "cart", "ship"]
    return (" ".join(rng.choice(words) for _ in range(n)) + "\n").encode()


def tar_bytes(build, fmt=tarfile.PAX_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
        build(tar)
    return buf.getvalue()


def write_gz(name, raw):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(gzip.compress(raw, compresslevel=6, mtime=0))


def website(tar):
    add_dir(tar, "site/")
    add_file(tar, "site/index.html", b"<h1>Shop</h1>\n" + text(400))
    add_dir(tar, "site/assets/")
    add_file(tar, "site/assets/app.js", text(2000), mtime=1700003600)
    add_file(tar, "site/assets/logo.bin", bytes(rng.randrange(256) for _ in range(20000)))
    add_file(tar, "site/deploy.sh", b"#!/bin/sh\nrsync -a site/ /srv/www/\n", mode=0o755)
    add_link(tar, "site/latest", "index.html")
    add_file(tar, "site/caf\u00e9/menu.txt", "Men\u00fc: Kaffee \u2615\n".encode())


def photos(tar):
    add_dir(tar, "photos 2023/")
    for i in range(6):
        add_file(tar, f"photos 2023/IMG_{i:04d}.raw",
                 bytes(rng.randrange(256) for _ in range(30000)) + bytes(30000),
                 mode=0o600, mtime=1672531200 + i * 86400, user=("alice", 1000))


def configs(tar):
    for name in ("nginx.conf", "app.ini", "crontab"):
        add_file(tar, f"etc/{name}", text(120), mode=0o640, user=("root", 0))


def logs(tar):
    for day in range(1, 8):
        add_file(tar, f"logs/app-2024-01-{day:02d}.log", text(3000), user=("syslog", 104))


def dbdump(tar):
    add_file(tar, "dump.sql", text(8000), user=("postgres", 999))


write_gz("website-2024-05.tar.gz", tar_bytes(website))
write_gz("photos 2023.tar.gz", tar_bytes(photos))
write_gz("configs.tgz", tar_bytes(configs, tarfile.GNU_FORMAT))
raw = tar_bytes(logs)
write_gz("logs-2024.tar.gz", raw[: len(raw) // 2 + 100])  # tar cut short, gzip fine
whole = gzip.compress(tar_bytes(dbdump), compresslevel=6, mtime=0)
with open(os.path.join(OUT, "db-dump.tar.gz"), "wb") as f:
    f.write(whole[: len(whole) * 2 // 3])  # gzip stream cut short
with open(os.path.join(OUT, "notes.txt"), "w") as f:
    f.write("Archives to move to zstd before the storage migration.\n")
