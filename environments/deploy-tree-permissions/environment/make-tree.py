"""Build the broken /srv/shop deploy tree (deterministic)."""
import os
import random

rng = random.Random(1337)
ROOT = "/srv/shop"
BAD_FILE_MODES = [0o777, 0o666, 0o600, 0o644, 0o755, 0o700, 0o640, 0o4755, 0o2755]
BAD_DIR_MODES = [0o777, 0o700, 0o755, 0o775, 0o1777, 0o750, 0o2777]
OWNERS = [(0, 0), (3001, 3001), (3200, 3200), (3002, 0), (0, 3000)]


def write(rel, text):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


for release in ("2024-05-01", "2024-06-12"):
    base = f"releases/{release}"
    for mod in ("main", "models", "views", "cart", "payments"):
        write(f"{base}/app/{mod}.py", f"# {mod} module of release {release}\nVALUE = {rng.randrange(1000)}\n")
    for tpl in ("base", "cart", "checkout"):
        write(f"{base}/app/templates/{tpl}.html", f"<!-- {tpl} {release} -->\n")
    write(f"{base}/bin/migrate", "#!/bin/sh\necho migrating\n")
    write(f"{base}/bin/worker", "#!/bin/sh\necho worker running\n")
    write(f"{base}/manage.sh", "#!/bin/sh\necho manage \"$@\"\n")
    write(f"{base}/requirements.txt", "flask==3.0.3\ngunicorn==22.0.0\n")
write("releases/2024-06-12/bin/helper", "#!/bin/sh\necho helper\n")
write("releases/2024-06-12/tools/rebuild-index.sh", "#!/bin/sh\necho rebuild\n")
write("README.md", "# shop deployment\n")
write("shared/config/app.env", "SECRET_KEY=9f8e7d6c5b4a\nDB_PASSWORD=hunter2\n")
write("shared/config/app.ini", "[app]\nworkers = 4\n")
for year in ("2023", "2024"):
    for month in ("01", "02", "03"):
        for i in range(5):
            write(f"shared/uploads/{year}/{month}/img_{i:03d}.jpg", f"jpeg {year}{month}{i}\n")
write("shared/logs/app.log", "started\n")
write("shared/logs/access.log", "GET /\n")
write("shared/logs/old/app.log.1", "older\n")
os.symlink("releases/2024-06-12", os.path.join(ROOT, "current"))

for dirpath, dirnames, filenames in os.walk(ROOT):
    dirnames.sort()
    for name in sorted(filenames):
        p = os.path.join(dirpath, name)
        if os.path.islink(p):
            continue
        os.chown(p, *rng.choice(OWNERS))
        os.chmod(p, rng.choice(BAD_FILE_MODES))
    for name in dirnames:
        p = os.path.join(dirpath, name)
        os.chown(p, *rng.choice(OWNERS))
        os.chmod(p, rng.choice(BAD_DIR_MODES))
os.chmod(os.path.join(ROOT, "releases/2024-06-12/bin/helper"), 0o4755)
os.chmod(os.path.join(ROOT, "shared/config/app.env"), 0o666)
os.chmod(ROOT, 0o777)
os.chmod(os.path.join(ROOT, "shared"), 0o2777)
os.chmod(os.path.join(ROOT, "shared/config"), 0o2777)
os.chmod(os.path.join(ROOT, "releases"), 0o755)
os.chmod(os.path.join(ROOT, "releases/2024-06-12"), 0o1777)
os.chmod(os.path.join(ROOT, "releases/2024-06-12/app"), 0o777)
os.chmod(os.path.join(ROOT, "releases/2024-06-12/app/main.py"), 0o666)
