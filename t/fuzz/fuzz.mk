# SPDX-License-Identifier: Apache-2.0
# t/fuzz/fuzz.mk: builds the fuzz targets (make -f t/fuzz/fuzz.mk, from the
# top of the tree; t/fuzz/run does it).  Every t/fuzz/fuzz_NAME.c is a
# target, linked against the core's sources compiled here with clang,
# libFuzzer, ASan and UBSan (not the libtool archives of the normal build,
# which are compiled without sanitizers).  The core's objects go into an
# archive so each target links only what it uses.
CC       = clang
BUILD    = t/fuzz/build
# The core's libraries (configure.ac requires each of them).
PKGS     = apr-1 apr-util-1 sqlite3 libpcre2-8 zlib libcurl libpq libidn2
SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined
# -Werror for the targets only: the core's warnings are the normal build's
# job (gcc, --enable-werror); clang's own extra ones must not stop fuzzing.
CFLAGS   = -g -O1 -fno-omit-frame-pointer $(SAN) -Wall -Wextra \
           $(shell pkg-config --cflags $(PKGS)) -I. -Isrc -It/fuzz
LIBS     = $(shell pkg-config --libs $(PKGS))

# The core and sitemapctl's library (the log reader), not sitemapctl's main
# nor the stand-ins of a build without an optional part (*_none.c).
CORE_SRC = $(filter-out src/ctl/sitemapctl% %_none.c,$(wildcard src/*/*.c))
CORE_OBJ = $(CORE_SRC:src/%.c=$(BUILD)/core/%.o)
TARGETS  = $(patsubst t/fuzz/fuzz_%.c,$(BUILD)/fuzz_%,$(wildcard t/fuzz/fuzz_*.c))

all: $(TARGETS)

$(BUILD)/core/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(BUILD)/libcore.a: $(CORE_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/fuzz_%: t/fuzz/fuzz_%.c $(BUILD)/libcore.a
	$(CC) $(CFLAGS) -Werror -fsanitize=fuzzer -MMD -MP $< $(BUILD)/libcore.a \
	    $(LIBS) -lpthread -o $@

.PHONY: all
-include $(CORE_OBJ:.o=.d) $(TARGETS:=.d)
