#!/usr/bin/env bash
set -euo pipefail
cd /srv/shop
# chown first: it may clear set-ID bits, which chmod then sets explicitly.
chown -h deploy:deploy . releases README.md shared current
find releases -type d -exec chown deploy:deploy {} + -exec chmod 02775 {} +
find releases -type f -exec chown deploy:deploy {} + -exec chmod 0664 {} +
find releases -type f \( \( -path '*/bin/*' ! -path '*/bin/*/*' \) -o -name '*.sh' \) -exec chmod 0775 {} +
chmod 02775 .
chmod 0664 README.md
chmod 00755 shared   # five digits: a plain 0755 would keep a directory's set-group-ID bit
chown root:shop shared/config && chmod 00750 shared/config
find shared/config -mindepth 1 -type f -exec chown root:shop {} + -exec chmod 0640 {} +
find shared/uploads -type d -exec chown shop:shop {} + -exec chmod 02770 {} +
find shared/uploads -type f -exec chown shop:shop {} + -exec chmod 0660 {} +
find shared/logs -type d -exec chown shop:adm {} + -exec chmod 02750 {} +
find shared/logs -type f -exec chown shop:adm {} + -exec chmod 0640 {} +
