#!/usr/bin/env bash
set -euo pipefail
cat > /app/strutil/Makefile <<'MAKE'
CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif
CFLAGS ?= -std=c11 -Wall -Wextra -O2
CPPFLAGS += -Iinclude
AR ?= ar
ARFLAGS := rcs
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL ?= install

BUILD := build
SRCS := $(sort $(wildcard src/*.c))
OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(SRCS))
LIB := $(BUILD)/libstrutil.a
BIN := $(BUILD)/strtool
HEADER := include/strutil.h

.PHONY: all check install clean

all: $(LIB) $(BIN)

$(BUILD)/obj $(BUILD)/cli:
	mkdir -p $@

$(BUILD)/obj/%.o: src/%.c $(HEADER) | $(BUILD)/obj
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(OBJS)
	rm -f $@
	$(AR) $(ARFLAGS) $@ $^

$(BUILD)/cli/strtool.o: cli/strtool.c $(HEADER) | $(BUILD)/cli
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BIN): $(BUILD)/cli/strtool.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) $< $(LIB) -o $@

check: $(BIN)
	tests/run_tests.sh $(BIN)

install: $(LIB) $(BIN)
	$(INSTALL) -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	$(INSTALL) -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/strtool
	$(INSTALL) -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libstrutil.a
	$(INSTALL) -m 644 $(HEADER) $(DESTDIR)$(PREFIX)/include/strutil.h

clean:
	rm -rf $(BUILD)
MAKE
cd /app/strutil && make
