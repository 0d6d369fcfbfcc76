/*
 * td_audio_slots: the ring bookkeeping every td_audio.h source shares (which slot holds which
 * block, and whose it is), so that the sources differ only in how samples arrive.
 *
 * A slot is FREE (the source may arm it), ARMED (the source fills it or will fill it next),
 * READY (a completed block the app has not taken) or TAKEN (the app's until released). The
 * source arms slots in ring order (the next slot after the last one armed, and only if it is
 * FREE), which keeps consecutive delivered blocks in consecutive slots. None of these
 * functions masks interrupts: a source calls them from its interrupt, or from thread mode
 * with its interrupt masked.
 */
#ifndef TD_AUDIO_SLOTS_H
#define TD_AUDIO_SLOTS_H

#include <stdint.h>

#include "td_audio.h"

#define TD_AUDIO_MAX_SLOTS 16u

enum { TD_SLOT_FREE = 0, TD_SLOT_ARMED, TD_SLOT_READY, TD_SLOT_TAKEN };

typedef struct {
    td_audio_config_t cfg;
    volatile uint8_t state[TD_AUDIO_MAX_SLOTS];
    volatile uint32_t block[TD_AUDIO_MAX_SLOTS];
    uint32_t last_armed;           /* the slot armed last */
    volatile uint32_t lost_samples;
} td_audio_slots_t;

/* Checks cfg (>= 3 and <= TD_AUDIO_MAX_SLOTS slots, 1 .. max_block samples a block) and
 * frees every slot: 0, or -1 for a config it cannot serve. */
int td_audio_slots_init(td_audio_slots_t *s, const td_audio_config_t *cfg, uint32_t max_block);

/* Arms the slot after the last one armed if it is FREE and returns it, else -1 (the app
 * holds it: the block meant for it will be dropped). */
int32_t td_audio_slots_arm(td_audio_slots_t *s);

/* The samples of slot i. */
int16_t *td_audio_slots_samples(td_audio_slots_t *s, int32_t i);

/* Slot i now holds completed block n. */
void td_audio_slots_ready(td_audio_slots_t *s, int32_t i, uint32_t n);

/* The READY slot with the lowest block number, -1 if none. */
int32_t td_audio_slots_oldest_ready(const td_audio_slots_t *s);

/* td_audio_take and td_audio_release on the table (see td_audio.h). */
const int16_t *td_audio_slots_take(td_audio_slots_t *s, uint32_t *block);
void td_audio_slots_release(td_audio_slots_t *s, uint32_t upto);

/* Interrupts masked (PRIMASK) around what a source's interrupt also touches: the previous
 * mask, for td_audio_irq_restore. A source built against fake registers on the host
 * (TD_AUDIO_FAKE_REGS) has no interrupt to mask. */
#if defined(TD_AUDIO_FAKE_REGS)
static inline uint32_t td_audio_irq_off(void) { return 0u; }
static inline void td_audio_irq_restore(uint32_t primask) { (void)primask; }
#else
static inline uint32_t td_audio_irq_off(void)
{
    uint32_t primask;
    __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
    return primask;
}

static inline void td_audio_irq_restore(uint32_t primask)
{
    __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
}
#endif

/* td_audio_take and td_audio_release of a source whose interrupt fills s: the table
 * functions above with that interrupt masked. */
static inline const int16_t *td_audio_slots_take_masked(td_audio_slots_t *s, uint32_t *block)
{
    const uint32_t m = td_audio_irq_off();
    const int16_t *p = td_audio_slots_take(s, block);
    td_audio_irq_restore(m);
    return p;
}

static inline void td_audio_slots_release_masked(td_audio_slots_t *s, uint32_t upto)
{
    const uint32_t m = td_audio_irq_off();
    td_audio_slots_release(s, upto);
    td_audio_irq_restore(m);
}

#endif /* TD_AUDIO_SLOTS_H */
