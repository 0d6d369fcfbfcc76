/*
 * td_audio_virtual: the microphone of an emulated board (QEMU only; docs/audio.md).
 *
 * Samples come from a file on the host: raw 16 kHz mono int16 little-endian, its path the
 * emulator's semihosting command line (`-semihosting-config ...,arg=PATH`). Time is the
 * emulated clock's: SysTick interrupts once per block period (TD_CLOCK_HZ is SysTick's rate
 * under QEMU), and with `-icount shift=N` the emulated core runs 2^-N G instructions per
 * emulated second, so an application that takes too long for the board's clock falls behind
 * here exactly as it would on the chip.
 *
 * The tick behaves as a DMA engine with two buffers (the nRF52840 PDM's EasyDMA): at the end
 * of block n the samples of block n land in the slot armed for it one period earlier, and
 * the slot for block n + 2 is armed now (the next free slot after the last one armed). A
 * block whose slot could not be armed, because the app still held every slot, is skipped in
 * the file and counted as an overrun. Reading the file costs the emulated core one
 * instruction (the semihosting trap), as DMA costs the core nothing.
 */
#include "td_audio.h"

#if defined(TD_QEMU) && TD_QEMU

#include "td_cortexm.h"

#ifndef TD_CLOCK_HZ
#error "TD_CLOCK_HZ must be defined (SysTick's clock under QEMU)"
#endif

#define TD_AUDIO_MAX_SLOTS 16u

enum { SLOT_FREE = 0, SLOT_ARMED, SLOT_READY, SLOT_TAKEN };

static td_audio_config_t cfg;
static volatile uint8_t slot_state[TD_AUDIO_MAX_SLOTS];
static volatile uint32_t slot_block[TD_AUDIO_MAX_SLOTS];
static volatile int32_t armed_cur = -1;  /* slot of the block being heard, -1: none */
static volatile int32_t armed_next = -1; /* slot of the block after it */
static volatile uint32_t heard;          /* blocks completed (delivered or lost) */
static volatile uint32_t lost_samples;
static volatile uint8_t at_end;
static uint32_t last_armed;              /* the slot armed last (the next one follows it) */
static int32_t file = -1;
static uint32_t file_pos;                /* bytes consumed from the file */

/* SYS_OPEN 0x01, SYS_READ 0x06, SYS_SEEK 0x0A, SYS_GET_CMDLINE 0x15 */
static int32_t open_cmdline_file(void)
{
    char path[256]; /* on the stack: only at start, before anything else runs */
    volatile uint32_t cmd[2];
    volatile uint32_t op[3];
    uint32_t n = 0;
    cmd[0] = (uint32_t)(uintptr_t)path;
    cmd[1] = sizeof path - 1u;
    if (td_semihost(0x15u, cmd) != 0u)
        return -1;
    while (n < sizeof path - 1u && path[n] != '\0')
        n++;                              /* the one argument: the path */
    path[n] = '\0';
    if (n == 0u)
        return -1;
    op[0] = (uint32_t)(uintptr_t)path;
    op[1] = 1u;                           /* "rb" */
    op[2] = n;
    return (int32_t)td_semihost(0x01u, op);
}

/* The next free slot after the last one armed, or -1 when the app holds it. Keeping to ring
 * order is what makes consecutive delivered blocks consecutive slots. */
static int32_t arm_slot(void)
{
    uint32_t s = (last_armed + 1u) % cfg.nblocks;
    if (slot_state[s] != SLOT_FREE)
        return -1;
    slot_state[s] = SLOT_ARMED;
    last_armed = s;
    return (int32_t)s;
}

void td_cortexm_tick(void)
{
    uint32_t bytes = cfg.block_samples * 2u;
    int32_t s = armed_cur;
    if (at_end)
        return;
    if (s >= 0) {
        volatile uint32_t rd[3];
        rd[0] = (uint32_t)file;
        rd[1] = (uint32_t)(uintptr_t)&cfg.ring[(uint32_t)s * cfg.block_samples];
        rd[2] = bytes;
        if (td_semihost(0x06u, rd) != 0u) { /* bytes not read: the file has ended */
            slot_state[s] = SLOT_FREE;
            at_end = 1u;
            return;
        }
        slot_block[s] = heard;
        slot_state[s] = SLOT_READY;
    } else {
        volatile uint32_t sk[2];
        sk[0] = (uint32_t)file;
        sk[1] = file_pos + bytes;
        (void)td_semihost(0x0Au, sk);
        lost_samples += cfg.block_samples;
    }
    file_pos += bytes;
    heard++;
    armed_cur = armed_next;
    armed_next = arm_slot();
}

int td_audio_start(const td_audio_config_t *c)
{
    uint32_t i;
    if (c == 0 || c->ring == 0 || c->nblocks < 3u || c->nblocks > TD_AUDIO_MAX_SLOTS ||
        c->block_samples == 0u)
        return -1;
    cfg = *c;
    for (i = 0; i < cfg.nblocks; i++)
        slot_state[i] = SLOT_FREE;
    file = open_cmdline_file();
    if (file < 0)
        return -2;
    heard = 0u;
    lost_samples = 0u;
    at_end = 0u;
    file_pos = 0u;
    last_armed = cfg.nblocks - 1u;
    armed_cur = arm_slot();
    armed_next = arm_slot();
    /* the block clock: td_cortexm_tick() below runs once per block period */
    td_cortexm_systick_period((uint32_t)((uint64_t)TD_CLOCK_HZ * cfg.block_samples /
                                         TD_AUDIO_SAMPLE_RATE),
                              1);
    return 0;
}

static uint32_t irq_off(void)
{
    uint32_t primask;
    __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
    return primask;
}

static void irq_restore(uint32_t primask)
{
    __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
}

/* the READY slot with the lowest block number, -1 if none */
static int32_t oldest_ready(void)
{
    int32_t best = -1;
    uint32_t i;
    for (i = 0; i < cfg.nblocks; i++) {
        if (slot_state[i] == SLOT_READY &&
            (best < 0 || slot_block[i] < slot_block[(uint32_t)best]))
            best = (int32_t)i;
    }
    return best;
}

const int16_t *td_audio_take(uint32_t *block)
{
    uint32_t m = irq_off();
    int32_t s = oldest_ready();
    const int16_t *p = 0;
    if (s >= 0) {
        slot_state[s] = SLOT_TAKEN;
        *block = slot_block[s];
        p = &cfg.ring[(uint32_t)s * cfg.block_samples];
    }
    irq_restore(m);
    return p;
}

void td_audio_release(uint32_t upto)
{
    uint32_t m = irq_off();
    uint32_t i;
    for (i = 0; i < cfg.nblocks; i++) {
        if ((slot_state[i] == SLOT_TAKEN || slot_state[i] == SLOT_READY) &&
            slot_block[i] < upto)
            slot_state[i] = SLOT_FREE;
    }
    irq_restore(m);
}

uint32_t td_audio_overruns(void) { return lost_samples; }

int td_audio_ended(void)
{
    uint32_t m = irq_off();
    int e = at_end && oldest_ready() < 0;
    irq_restore(m);
    return e;
}

void td_audio_wait(void)
{
    uint32_t m = irq_off();
    if (!at_end && oldest_ready() < 0)
        __asm volatile("wfi" ::: "memory"); /* wakes on the pending tick even with PRIMASK */
    irq_restore(m);
}

void td_audio_stop(void)
{
    uint32_t m = irq_off();
    at_end = 1u;
    irq_restore(m);
}

#endif /* TD_QEMU */
