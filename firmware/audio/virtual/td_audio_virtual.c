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

#include "td_audio_slots.h"
#include "td_cortexm.h"

#ifndef TD_CLOCK_HZ
#error "TD_CLOCK_HZ must be defined (SysTick's clock under QEMU)"
#endif

static td_audio_slots_t slots;
static volatile int32_t armed_cur = -1;  /* slot of the block being heard, -1: none */
static volatile int32_t armed_next = -1; /* slot of the block after it */
static volatile uint32_t heard;          /* blocks completed (delivered or lost) */
static volatile uint8_t at_end;
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

void td_cortexm_tick(void)
{
    uint32_t bytes = slots.cfg.block_samples * 2u;
    int32_t s = armed_cur;
    if (at_end)
        return;
    if (s >= 0) {
        volatile uint32_t rd[3];
        rd[0] = (uint32_t)file;
        rd[1] = (uint32_t)(uintptr_t)td_audio_slots_samples(&slots, s);
        rd[2] = bytes;
        if (td_semihost(0x06u, rd) != 0u) { /* bytes not read: the file has ended */
            slots.state[s] = TD_SLOT_FREE;
            at_end = 1u;
            return;
        }
        td_audio_slots_ready(&slots, s, heard);
    } else {
        volatile uint32_t sk[2];
        sk[0] = (uint32_t)file;
        sk[1] = file_pos + bytes;
        (void)td_semihost(0x0Au, sk);
        slots.lost_samples += slots.cfg.block_samples;
    }
    file_pos += bytes;
    heard++;
    armed_cur = armed_next;
    armed_next = td_audio_slots_arm(&slots);
}

int td_audio_start(const td_audio_config_t *c)
{
    if (td_audio_slots_init(&slots, c, 0xFFFFu) != 0)
        return -1;
    file = open_cmdline_file();
    if (file < 0)
        return -2;
    heard = 0u;
    at_end = 0u;
    file_pos = 0u;
    armed_cur = td_audio_slots_arm(&slots);
    armed_next = td_audio_slots_arm(&slots);
    /* the block clock: td_cortexm_tick() below runs once per block period */
    td_cortexm_systick_period((uint32_t)((uint64_t)TD_CLOCK_HZ * slots.cfg.block_samples /
                                         TD_AUDIO_SAMPLE_RATE),
                              1);
    return 0;
}

const int16_t *td_audio_take(uint32_t *block) { return td_audio_slots_take_masked(&slots, block); }

void td_audio_release(uint32_t upto) { td_audio_slots_release_masked(&slots, upto); }

uint32_t td_audio_overruns(void) { return slots.lost_samples; }

int td_audio_ended(void)
{
    uint32_t m = td_audio_irq_off();
    int e = at_end && td_audio_slots_oldest_ready(&slots) < 0;
    td_audio_irq_restore(m);
    return e;
}

void td_audio_wait(void)
{
    uint32_t m = td_audio_irq_off();
    if (!at_end && td_audio_slots_oldest_ready(&slots) < 0)
        __asm volatile("wfi" ::: "memory"); /* wakes on the pending tick even with PRIMASK */
    td_audio_irq_restore(m);
}

void td_audio_stop(void)
{
    uint32_t m = td_audio_irq_off();
    at_end = 1u;
    td_audio_irq_restore(m);
}

#endif /* TD_QEMU */
