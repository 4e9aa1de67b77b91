# kitsune - analytical GPU model of bulk-synchronous, vertical-fusion and spatial-pipeline execution.
# Settings ------------------------------------------------------------------------------------
CC      ?= cc
STD      = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
WARN     = -Wall -Wextra -Werror -Wshadow -Wconversion -Wstrict-prototypes -Wmissing-prototypes -Wvla
OPT     ?= -O2
CJSON_CFLAGS := $(shell pkg-config --cflags libcjson 2>/dev/null)
CJSON_LIBS   := $(shell pkg-config --libs libcjson 2>/dev/null || echo -lcjson)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm -lpthread)
# GLPK is linked statically when its archive is there (Debian's libglpk-dev ships it): the
# binary then maps 8 fewer shared libraries at start-up (predict --help: 9.7 -> 6.1 ms of CPU,
# 122 -> 86 page faults, medians of 30 runs). The archive needs zlib's archive and libltdl
# (GLPK's gzip and dlopen support, unused here; without libltdl-dev there is no libltdl.so
# link, so the runtime library is named). Otherwise, or with GLPK_SHARED=1: -lglpk.
GLPK_STATIC := $(and $(filter-out libglpk.a,$(shell $(CC) -print-file-name=libglpk.a)),\
                     $(filter-out libz.a,$(shell $(CC) -print-file-name=libz.a)),\
                     $(filter-out libltdl.so.7,$(shell $(CC) -print-file-name=libltdl.so.7)))
ifeq ($(GLPK_SHARED)$(if $(GLPK_STATIC),,none),)
  GLPK_LIBS  = -Wl,-Bstatic -lglpk -lz -Wl,-Bdynamic -l:libltdl.so.7
else
  GLPK_LIBS  = -lglpk
endif
CFLAGS  += $(STD) $(WARN) $(OPT) $(CJSON_CFLAGS) -MMD -MP
LDLIBS   = $(GLPK_LIBS) $(CJSON_LIBS) -lm -lpthread

# Installation (make install PREFIX=... [DESTDIR=...]): bin/, share/kitsune/{hw,workloads},
# include/kitsune/, lib/libkitsune.a, lib/pkgconfig/kitsune.pc, share/man/man1/kitsune.1.
PREFIX  ?= /usr/local
DESTDIR ?=

ifeq ($(SAN),1)
  BUILD  = build/asan
  OPT    = -O1 -g
  CFLAGS += -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
            -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=address,undefined,float-cast-overflow
else ifeq ($(FUZZ),1)
  # make fuzz: libFuzzer harnesses (clang), the library instrumented for coverage
  BUILD  = build/fuzz
  CC     = clang
  OPT    = -O1 -g
  CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=address,undefined,float-cast-overflow
else ifeq ($(DEBUG),1)
  BUILD  = build/debug
  OPT    = -O0 -g
else
  BUILD  = build
endif

LIB_SRC  = $(wildcard src/*.c) $(wildcard src/io/*.c) $(wildcard src/model/*.c) \
           $(wildcard src/model/exec/*.c) $(wildcard src/opt/*.c)
LIB_SRC := $(filter-out src/main.c,$(LIB_SRC))
CLI_SRC  = src/main.c $(wildcard src/cli/*.c)
TEST_SRC = $(wildcard tests/check_*.c)
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_BIN = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
LIB      = $(BUILD)/libkitsune.a
BIN      = $(BUILD)/kitsune
# The installed binary also knows its prefix's data directory (src/cli/common.c, KT_DATADIR).
INST_BIN = $(BUILD)/install/kitsune
INST_OBJ = $(filter-out $(BUILD)/obj/src/cli/common.o,$(CLI_OBJ)) $(BUILD)/install/common.o
# Fuzz harnesses (tests/fuzz/fuzz_NAME.c): libFuzzer binaries for make fuzz, and replay
# binaries (tests/fuzz/replay.c reads the corpus) that make check runs in every build.
FUZZ_NAMES  = wl hw expr refs cli
FUZZ_SECONDS ?= 60
CLI_LIB_OBJ = $(filter-out $(BUILD)/obj/src/main.o,$(CLI_OBJ))
REPLAY_BIN  = $(FUZZ_NAMES:%=$(BUILD)/fuzz/replay_%)
FUZZ_BIN    = $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)

.PHONY: all deps deps-test demo check unit golden bad tools crash fuzz-replay fuzz fuzz-bins clang-check \
        export-test test asan bench figures validate clean install install-check docs docs-check FORCE
all: $(BIN)

# V=1 prints every command.
Q = $(if $(V),,@)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(V),:,echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	@$(if $(V),:,echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(CLI_OBJ) $(LIB) $(LDLIBS) -o $@

$(BUILD)/install/common.o: src/cli/common.c FORCE
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -DKT_DATADIR='"$(PREFIX)/share/kitsune"' -c $< -o $@

$(INST_BIN): $(INST_OBJ) $(LIB)
	$(Q)$(CC) $(LDFLAGS) $(INST_OBJ) $(LIB) $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/%.c tests/ktest.h $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),:,echo "  TEST    $@")
	$(Q)$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(LDFLAGS) $< $(LIB) $(CHECK_LIBS) $(LDLIBS) -o $@

$(BUILD)/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(CLI_LIB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),:,echo "  FUZZ    $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) tests/fuzz/fuzz_$*.c tests/fuzz/replay.c $(CLI_LIB_OBJ) $(LIB) $(LDLIBS) -o $@

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(CLI_LIB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),:,echo "  FUZZ    $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -fsanitize=fuzzer tests/fuzz/fuzz_$*.c $(CLI_LIB_OBJ) $(LIB) $(LDLIBS) -o $@

# Set-up: installs missing Debian packages (a no-op when all are present); deps-test also what
# only the tests need (python3-torch for the exporter's tests).
deps:
	@sh scripts/install-deps.sh

deps-test:
	@sh scripts/install-deps.sh test

# The main job on the shipped defaults.
demo: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/demo.sh

# Every test: unit tests, golden CLI tests and the bad-input corpus, then the same under
# AddressSanitizer + UndefinedBehaviorSanitizer.
check: deps-test
	@$(MAKE) --no-print-directory test
	@$(MAKE) --no-print-directory SAN=1 test
	@echo "make check: all tests passed (normal and ASan/UBSan builds)"

# The parts of `test`, each runnable alone.
unit: $(TEST_BIN)
	@sh tests/run-unit.sh $(BUILD)

golden: $(BIN)
	@sh tests/run-golden.sh $(BIN)

bad: $(BIN)
	@sh tests/run-bad.sh $(BIN)

tools: $(BIN)
	@sh tests/run-tools.sh $(BIN)
	@sh tests/run-validate.sh $(BIN)

crash: $(BIN)
	@sh tests/run-crash.sh $(BIN)

# The fuzz corpus (tests/fuzz/corpus/NAME) through each harness, in this build (ASan/UBSan in
# make check's second pass): every input the fuzzers kept, and every crash they found, fixed.
fuzz-replay: $(REPLAY_BIN)
	@sh tests/fuzz/replay.sh $(BUILD)/fuzz $(FUZZ_NAMES)

# libFuzzer (clang): each harness for FUZZ_SECONDS (default 60) from the corpus and dictionary
# in tests/fuzz; new inputs go to build/fuzz/corpus/NAME, crashes to build/fuzz/crash-NAME-*.
fuzz:
	@$(MAKE) --no-print-directory FUZZ=1 fuzz-bins
	@sh tests/fuzz/run.sh build/fuzz/fuzz $(FUZZ_SECONDS) $(FUZZ_NAMES)

fuzz-bins: $(FUZZ_BIN)

# The PyTorch exporter (tools/kitsune-export): skipped with a notice when torch is missing.
export-test: $(BIN)
	@sh tests/export/run-export.sh $(BIN)

# Install into a temporary prefix and use it from elsewhere (not under the sanitizers: a
# program linked against the installed library would need their runtime).
install-check: $(BIN) $(LIB)
	@sh tests/run-install.sh $(BIN)

# The examples in README.md and docs/*.md are real output (scripts/docs.sh): docs-check fails
# when one differs; after a model change, `make docs` rewrites them (review the diff, commit).
docs-check: $(BIN)
	@sh scripts/docs.sh --check

docs: $(BIN)
	@sh scripts/docs.sh --update

test: $(BIN) $(TEST_BIN)
	@$(MAKE) --no-print-directory unit golden bad tools crash fuzz-replay
	@[ -n "$(SAN)" ] || $(MAKE) --no-print-directory export-test install-check docs-check clang-check

# The sources under clang's warnings too (make fuzz builds with clang and -Werror; gcc misses
# some of clang's -Wconversion cases): a syntax-only pass, skipped with a notice without clang.
clang-check:
	@if command -v clang >/dev/null 2>&1; then \
	    for f in $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) $(wildcard tests/fuzz/*.c); do \
	        clang $(STD) $(WARN) $(CJSON_CFLAGS) $(CHECK_CFLAGS) -fsyntax-only $$f || exit 1; \
	    done; echo "clang-check: every source compiles under clang's warnings"; \
	else echo "clang-check: skipped (no clang)"; fi

install: $(INST_BIN) $(LIB)
	@sh scripts/install.sh "$(DESTDIR)" "$(PREFIX)" $(INST_BIN) $(LIB) "$(CC)" "$(CJSON_CFLAGS)"

asan:
	@$(MAKE) --no-print-directory SAN=1 test

# The in-process timer of one prediction (bench/predict_loop.c): make bench's comparison with a
# peer tool (scripts/bench-genz.sh).
$(BUILD)/bench/predict_loop: bench/predict_loop.c $(LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LIB) $(LDLIBS) -o $@

bench: $(BIN) $(BUILD)/bench/predict_loop
	@sh scripts/bench.sh $(BIN)

validate: $(BIN)
	@sh scripts/validate.sh $(BIN)

figures: $(BIN)
	@sh scripts/figures.sh $(BIN)

clean:
	rm -rf build figures/*.tmp*

FORCE:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
