#!/usr/bin/env bash
set -euo pipefail
cat > /app/inventory/Makefile <<'MAKE'
# Build for the inventory summarizer `inv`.
CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif
CFLAGS ?= -std=c11 -Wall -Wextra -O2
CPPFLAGS += -Iinclude -Ibuild
DEPFLAGS = -MMD -MP
PREFIX ?= /usr/local
DESTDIR ?=

BUILD := build
SRCS := $(wildcard src/*.c)
OBJS := $(SRCS:src/%.c=$(BUILD)/%.o)
DEPS := $(OBJS:.o=.d)
BIN := $(BUILD)/inv

.PHONY: all check install clean

all: $(BIN)

$(BIN): $(OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJS)

$(BUILD):
	mkdir -p $@

# main.c includes the generated header; it must exist before main.o's first compile.
$(BUILD)/main.o: $(BUILD)/version.h

$(BUILD)/%.o: src/%.c | $(BUILD)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/version.h: VERSION | $(BUILD)
	printf '#define INV_VERSION "%s"\n' "$$(tr -d '\n' < VERSION)" > $@.tmp
	mv $@.tmp $@

check: $(BIN)
	./check/run.sh $(BIN)

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/inv

clean:
	rm -rf $(BUILD)

-include $(DEPS)
MAKE
cd /app/inventory && make clean >/dev/null && make
