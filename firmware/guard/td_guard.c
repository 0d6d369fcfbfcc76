/*
 * td_guard: canary and hash checks around every op of a `--guards` build (td_guard.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "td_fmt.h"
#include "td_guard.h"
#include "td_platform.h"

/* FNV-1a, 32 bits: any change of a single byte changes the hash (each step is a bijection
 * of the state for a given byte). */
static uint32_t td_guard_fnv(const uint8_t *p, uint32_t n)
{
    uint32_t h = 2166136261u;
    uint32_t i;
    for (i = 0u; i < n; ++i)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

void td_guard_before(uint8_t *arena, uint32_t op)
{
    uint32_t r, slot = 0u;
    for (r = td_guard_first[op]; r < td_guard_first[op + 1u]; ++r) {
        const td_guard_region_t *g = &td_guard_regions[r];
        uint8_t *p = arena + g->offset;
        if (g->live)
            td_guard_hash[slot++] = td_guard_fnv(p, g->size);
        else
            memset(p, td_guard_canary, g->size);
    }
}

static char *td_guard_fmt_i32(char *p, const char *end, int32_t v)
{
    if (v < 0) {
        p = td_fmt_str(p, end, "-");
        return td_fmt_u32(p, end, (uint32_t)0u - (uint32_t)v);
    }
    return td_fmt_u32(p, end, (uint32_t)v);
}

static void td_guard_fail(uint32_t op, const char *op_type, const td_guard_region_t *g,
                          int32_t byte)
{
    char text[224];
    char *p = text;
    const char *end = text + sizeof text;
    p = td_fmt_str(p, end, "guard: op ");
    p = td_fmt_u32(p, end, op);
    p = td_fmt_str(p, end, " (");
    p = td_fmt_str(p, end, op_type);
    if (g->live) {
        p = td_fmt_str(p, end, ") changed ");
    } else {
        p = td_fmt_str(p, end, ") changed arena byte ");
        p = td_guard_fmt_i32(p, end, byte);
        p = td_fmt_str(p, end, ": ");
    }
    p = td_fmt_str(p, end, td_guard_labels[g->label]);
    (void)p;
    td_platform_report_fault(text);
    td_platform_exit(1);
    for (;;) {
    }
}

void td_guard_after(const uint8_t *arena, uint32_t op, const char *op_type)
{
    uint32_t r, i, slot = 0u;
    for (r = td_guard_first[op]; r < td_guard_first[op + 1u]; ++r) {
        const td_guard_region_t *g = &td_guard_regions[r];
        const uint8_t *p = arena + g->offset;
        if (g->live) {
            if (td_guard_fnv(p, g->size) != td_guard_hash[slot++])
                td_guard_fail(op, op_type, g, g->offset);
            continue;
        }
        for (i = 0u; i < g->size; ++i) {
            if (p[i] != td_guard_canary)
                td_guard_fail(op, op_type, g, g->offset + (int32_t)i);
        }
    }
}
