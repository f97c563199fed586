"""Create the sample backup directory (deterministic)."""
import datetime as dt
import os
import random

rng = random.Random(20240607)
root = "/app/backups"
os.makedirs(root, exist_ok=True)
start = dt.datetime(2023, 9, 1, 1, 30, 0)
for series, step_h in (("db", 24), ("web-prod", 31)):
    t = start
    while t < dt.datetime(2024, 6, 10):
        if rng.random() < 0.85:
            name = f"{series}-{t:%Y%m%d-%H%M%S}.tar.gz"
            with open(os.path.join(root, name), "w") as f:
                f.write(f"{series} backup {t.isoformat()}\n")
        t += dt.timedelta(hours=step_h, minutes=rng.randrange(0, 50))
for extra in ("README.txt", "db-20240230-010000.tar.gz", "db-20240601-250000.tar.gz",
              "db-20240601-010000.tar.gz.partial", "web-prod-latest.tar.gz"):
    with open(os.path.join(root, extra), "w") as f:
        f.write("not a backup\n")
os.makedirs(os.path.join(root, "db-20240609-000000.tar.gz"), exist_ok=True)
