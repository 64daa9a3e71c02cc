# HotKV build.  `make` builds build/hotkv-server; `make run` also installs
# missing Debian packages (as root) and starts the server on 127.0.0.1:6379;
# `make test` builds and runs every test tier.  SANITIZER=address|thread
# builds an instrumented server into build-<sanitizer>/.
CC ?= gcc
SANITIZER ?=
OPT ?= -O2
BUILD ?= build$(if $(SANITIZER),-$(SANITIZER),)
WARN := -Wall -Wextra -Werror -Wno-missing-field-initializers
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g $(WARN) -pthread -MMD -MP -I/usr/include/lua5.1
ifeq ($(SANITIZER),address)
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  MALLOC_LIB :=
  CFLAGS_BASE += -DHK_NO_JEMALLOC
else ifeq ($(SANITIZER),thread)
  SANFLAGS := -fsanitize=thread
  MALLOC_LIB :=
  CFLAGS_BASE += -DHK_NO_JEMALLOC
else
  SANFLAGS :=
  MALLOC_LIB := -ljemalloc
endif
CFLAGS := $(CFLAGS_BASE) $(OPT) $(SANFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := -pthread $(SANFLAGS)
LDLIBS := $(MALLOC_LIB) -llua5.1 -luring -lssl -lcrypto -lm

SRCS := $(wildcard src/base/*.c src/proto/*.c src/ds/*.c src/db/*.c src/types/*.c src/net/*.c src/cmd/*.c src/config/*.c src/script/*.c src/persist/*.c src/cluster/*.c) src/server.c src/commands.c
OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(SRCS))
MAIN_OBJ := $(BUILD)/obj/main.o

all: $(BUILD)/hotkv-server

$(BUILD)/hotkv-server: $(OBJS) $(MAIN_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The check tools are the server binary under another name (main.c).
all: $(BUILD)/hotkv-check-rdb $(BUILD)/hotkv-check-aof
$(BUILD)/hotkv-check-rdb $(BUILD)/hotkv-check-aof: $(BUILD)/hotkv-server
	ln -sf hotkv-server $@

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

-include $(OBJS:.o=.d) $(MAIN_OBJ:.o=.d)

# Unit tests: everything but main.c linked with tests/unit/*.c.
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst tests/unit/%.c,$(BUILD)/obj/tests/%.o,$(UNIT_SRCS))
-include $(UNIT_OBJS:.o=.d)
$(BUILD)/obj/tests/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -c $< -o $@
$(BUILD)/unit-tests: $(OBJS) $(UNIT_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# hotkv-benchmark, the load generator (src/tools/benchmark/, not part of the
# server): its own sources only, no server code, linked with libc, pthread
# and libm.  The unit tests (test_hist.c) link the parts they check.
BENCH_SRCS := $(wildcard src/tools/benchmark/*.c)
BENCH_OBJS := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(BENCH_SRCS))
BENCH_UNIT_OBJS := $(addprefix $(BUILD)/obj/tools/benchmark/,hist.o keydist.o stamp.o rparse.o slot.o)
all: $(BUILD)/hotkv-benchmark
$(BUILD)/hotkv-benchmark: $(BENCH_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ -lm
$(BUILD)/unit-tests: $(BENCH_UNIT_OBJS)
-include $(BENCH_OBJS:.o=.d)

unit: $(BUILD)/unit-tests
	./$(BUILD)/unit-tests

# The include-direction check alone (make test runs it first).
layers:
	@python3 scripts/check-layers.py

deps:
	@./scripts/install-deps.sh

run: deps all
	./build/hotkv-server --bind 127.0.0.1 --port 6379

test: deps
	@./scripts/test.sh

# libFuzzer targets (tests/fuzz/: resp restore hnsw rdb aof manifest vexpr
# config), built with clang into build-fuzz/ and run FUZZ_SECONDS each
# (default 600); FUZZ_TARGETS="restore rdb" selects, FUZZ_JOBS=2 runs two at
# once.  Fails if anything was found (scripts/fuzz.sh).
fuzz:
	@./scripts/fuzz.sh

clean:
	rm -rf build build-address build-thread build-fuzz build-clang

.PHONY: all unit layers deps run test fuzz clean
