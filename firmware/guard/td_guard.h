/*
 * td_guard: the debug guards of a `--guards` build (tinydeploy/codegen/guards.py says what
 * is guarded and why). Around every op, td_model_invoke() calls td_guard_before() and
 * td_guard_after(): every arena byte the op must not write is either free (set to the canary
 * before, compared after) or part of a live buffer (hashed before, compared after), and the
 * TD_GUARD_BYTES before and after the arena are free at every op.
 *
 * A violation is reported through the platform's fault hook (a LOG frame of level FAULT
 * with the link layer) as one line naming the op index, its type and the region, e.g.
 *   guard: op 3 (SOFTMAX) changed arena byte 1234: free bytes [1234, 1248) after op 3's
 *   output 'y'
 * and the firmware exits with status 1: memory it no longer trusts is not computed on.
 * No allocation; the hash slots are a table of the generated model_guard.c.
 */
#ifndef TD_GUARD_H
#define TD_GUARD_H

#include <stdint.h>

typedef struct {
    int32_t offset;   /* from the arena's start; negative: inside the guard before it */
    uint32_t size;
    uint16_t label;   /* index into td_guard_labels */
    uint8_t live;     /* 1: a live buffer, checked by hash; 0: free, checked by canary */
} td_guard_region_t;

/* Generated (model_guard.c): op k's regions are td_guard_regions[td_guard_first[k] ..
 * td_guard_first[k + 1]); td_guard_hash has a slot for the most live regions of any op. */
extern const td_guard_region_t td_guard_regions[];
extern const uint32_t td_guard_first[];
extern const char *const td_guard_labels[];
extern uint32_t td_guard_hash[];
extern const uint8_t td_guard_canary;

/* arena: the arena's first byte (TD_GUARD_BYTES of guard lie before it). */
void td_guard_before(uint8_t *arena, uint32_t op);
void td_guard_after(const uint8_t *arena, uint32_t op, const char *op_type);

#endif /* TD_GUARD_H */
