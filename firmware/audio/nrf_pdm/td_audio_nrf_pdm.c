/*
 * td_audio_nrf_pdm: the nRF52840's PDM microphone interface as a td_audio.h source
 * (docs/audio.md). NOT RUN ON HARDWARE: written from the nRF52840 Product Specification
 * v1.7 (section 6.11 PDM, 6.4 CLOCK, 6.9 GPIO, 6.8 EasyDMA), built with warnings as errors,
 * and checked against a fake register block (tests/test_audio_nrf_pdm.py).
 *
 * Defines (from the board file's [audio] table, tinydeploy/codegen/platform.py):
 *   TD_AUDIO_CLK_PIN, TD_AUDIO_DIN_PIN   pins, 32 + n for P1.n
 *   TD_AUDIO_GAIN                        GAINL/GAINR value: 0x28 = 0 dB, 0.5 dB steps
 *   TD_AUDIO_POWER_PIN (optional)        a GPIO that powers the microphone, driven high
 *   TD_AUDIO_POWER_ON_MS                 the microphone's start-up time after power
 *   TD_AUDIO_DISCARD_MS                  samples thrown away after start (default 250 ms:
 *                                        the MEMS microphone's output settles first)
 *
 * 16 kHz exactly: PDMCLKCTRL = 1.280 MHz with RATIO = 80 (the reset value, 1.032 MHz / 64,
 * gives 16,129 Hz and is below the MP34DT05's 1.2 MHz minimum clock). Mono: the samples are
 * packed two per 32-bit word, first in the low half: a plain int16 array.
 *
 * EasyDMA: SAMPLE.PTR and SAMPLE.MAXCNT are double-buffered. START takes them; the STARTED
 * event says they were taken and the next buffer may be written; END says the buffer is full
 * (the peripheral is then already filling the next one). This driver keeps a ring of the
 * app's slots: on each STARTED it arms the slot after the last one armed if the app has
 * released it; if not, it arms the slot being filled again, so the block being filled now
 * is overwritten by the next one and dropped (counted as an overrun): the app's slots are
 * never written while it holds them.
 */
#include "td_audio.h"
#include "td_audio_slots.h"

#ifndef TD_AUDIO_FAKE_REGS
#include "td_cortexm.h"
#endif

#ifndef TD_AUDIO_CLK_PIN
#error "TD_AUDIO_CLK_PIN must be defined (board file [audio] clk_pin)"
#endif
#ifndef TD_AUDIO_DIN_PIN
#error "TD_AUDIO_DIN_PIN must be defined (board file [audio] din_pin)"
#endif
#ifndef TD_AUDIO_GAIN
#define TD_AUDIO_GAIN 0x28u /* 0 dB */
#endif
#ifndef TD_AUDIO_POWER_ON_MS
#define TD_AUDIO_POWER_ON_MS 10u
#endif
#ifndef TD_AUDIO_DISCARD_MS
#define TD_AUDIO_DISCARD_MS 250u
#endif
#ifndef TD_CLOCK_HZ
#define TD_CLOCK_HZ 64000000u
#endif

/* nRF52840 register addresses (Product Specification v1.7) */
#define PDM_BASE 0x4001D000u
#define PDM_TASKS_START (PDM_BASE + 0x000u)
#define PDM_TASKS_STOP (PDM_BASE + 0x004u)
#define PDM_EVENTS_STARTED (PDM_BASE + 0x100u)
#define PDM_EVENTS_STOPPED (PDM_BASE + 0x104u)
#define PDM_EVENTS_END (PDM_BASE + 0x108u)
#define PDM_INTENSET (PDM_BASE + 0x304u)
#define PDM_INTENCLR (PDM_BASE + 0x308u)
#define PDM_ENABLE (PDM_BASE + 0x500u)
#define PDM_PDMCLKCTRL (PDM_BASE + 0x504u)
#define PDM_MODE (PDM_BASE + 0x508u)
#define PDM_GAINL (PDM_BASE + 0x518u)
#define PDM_GAINR (PDM_BASE + 0x51Cu)
#define PDM_RATIO (PDM_BASE + 0x520u)
#define PDM_PSEL_CLK (PDM_BASE + 0x540u)
#define PDM_PSEL_DIN (PDM_BASE + 0x544u)
#define PDM_SAMPLE_PTR (PDM_BASE + 0x560u)
#define PDM_SAMPLE_MAXCNT (PDM_BASE + 0x564u)
#define CLOCK_TASKS_HFCLKSTART 0x40000000u
#define CLOCK_EVENTS_HFCLKSTARTED 0x40000100u
#define CLOCK_HFCLKSTAT 0x4000040Cu /* bit 0 SRC (1: crystal), bit 16 STATE (running) */
#define NVIC_ISER0 0xE000E100u
#define NVIC_ICER0 0xE000E180u
#define PDM_IRQN 29u
#define GPIO_PORT(pin) ((pin) >= 32u ? 0x50000300u : 0x50000000u)
#define GPIO_OUTSET(pin) (GPIO_PORT(pin) + 0x508u)
#define GPIO_OUTCLR(pin) (GPIO_PORT(pin) + 0x50Cu)
#define GPIO_PIN_CNF(pin) (GPIO_PORT(pin) + 0x700u + 4u * ((pin) & 31u))

#define INT_STARTED 1u
#define INT_STOPPED 2u
#define INT_END 4u
#define PDMCLK_1280K 0x0A000000u
#define RATIO_80 1u
#define MODE_MONO 1u /* OPERATION mono, EDGE LeftFalling */

/* Register access: volatile on the chip; a recording fake block in the host test. */
#ifdef TD_AUDIO_FAKE_REGS
uint32_t td_fake_read(uint32_t addr);
void td_fake_write(uint32_t addr, uint32_t value);
void td_fake_wfi(void);
#define RD(a) td_fake_read(a)
#define WR(a, v) td_fake_write((a), (v))
#define WFI() td_fake_wfi()
#else
#define RD(a) TD_REG32(a)
#define WR(a, v) (TD_REG32(a) = (v))
#define WFI() __asm volatile("wfi" ::: "memory")
#endif

static td_audio_slots_t slots;
static volatile int32_t filling = -1;   /* slot the PDM writes now */
static volatile int32_t armed = -1;     /* slot in SAMPLE.PTR for the block after it */
static volatile uint8_t armed_drops;    /* the armed slot is the filling one: drop it */
static volatile uint8_t filling_drops;
static volatile uint32_t heard;         /* blocks completed (delivered, lost or discarded) */
static uint32_t discard_blocks;         /* blocks thrown away after start */
static volatile uint8_t running;

static void delay_ms(uint32_t ms)
{
    /* a busy wait of at least ms (about 4 cycles an iteration): only at start-up */
    volatile uint32_t n = ms * (TD_CLOCK_HZ / 4000u);
    while (n > 0u)
        n = n - 1u;
}

static uint32_t slot_addr(int32_t s)
{
    return (uint32_t)(uintptr_t)td_audio_slots_samples(&slots, s);
}

/* STARTED: the peripheral took SAMPLE.PTR (the armed slot becomes the one filling); write
 * the pointer for the block after it. */
static void on_started(void)
{
    int32_t s;
    filling = armed;
    filling_drops = armed_drops;
    s = td_audio_slots_arm(&slots);
    if (s >= 0) {
        armed = s;
        armed_drops = 0u;
    } else {
        armed = filling; /* the next block overwrites this one, which is dropped */
        armed_drops = 1u;
        filling_drops = 1u;
    }
    WR(PDM_SAMPLE_PTR, slot_addr(armed));
}

/* END: the filling slot is full (or overwritten next: dropped). */
static void on_end(void)
{
    int32_t s = filling;
    uint32_t n = heard;
    heard = n + 1u;
    if (s < 0)
        return;
    if (filling_drops) {
        slots.lost_samples += slots.cfg.block_samples;
        return; /* the slot stays the DMA's: it is armed again */
    }
    if (n < discard_blocks) {
        slots.state[s] = TD_SLOT_FREE; /* settling: not heard */
        return;
    }
    td_audio_slots_ready(&slots, s, n);
}

/* PDM_IRQn = 29: END is handled before STARTED when both are pending (the block that ended
 * was the one filling before the pointer swap). */
void td_irq_29(void);
void td_irq_29(void)
{
    if (RD(PDM_EVENTS_END)) {
        WR(PDM_EVENTS_END, 0u);
        on_end();
    }
    if (RD(PDM_EVENTS_STARTED)) {
        WR(PDM_EVENTS_STARTED, 0u);
        on_started();
    }
    if (RD(PDM_EVENTS_STOPPED)) {
        WR(PDM_EVENTS_STOPPED, 0u);
        running = 0u;
    }
}

static void pin_output_low(uint32_t pin)
{
    WR(GPIO_OUTCLR(pin), 1u << (pin & 31u));
    WR(GPIO_PIN_CNF(pin), 1u); /* DIR output, input buffer disconnected */
}

int td_audio_start(const td_audio_config_t *c)
{
    uint32_t block;
    if (td_audio_slots_init(&slots, c, 32767u) != 0) /* MAXCNT is 15 bits */
        return -1;
    block = slots.cfg.block_samples;
    heard = 0u;
    discard_blocks = (TD_AUDIO_DISCARD_MS * TD_AUDIO_SAMPLE_RATE / 1000u + block - 1u) / block;
    /* 1. the high-frequency crystal: the PDM clock derives from it (the platform's start-up
     * has usually started it already for the UART: then it is not started again) */
    if ((RD(CLOCK_HFCLKSTAT) & 0x10001u) != 0x10001u) {
        WR(CLOCK_EVENTS_HFCLKSTARTED, 0u);
        WR(CLOCK_TASKS_HFCLKSTART, 1u);
        while (RD(CLOCK_EVENTS_HFCLKSTARTED) == 0u) {
        }
    }
    /* 2. the microphone's power, and its start-up time */
#ifdef TD_AUDIO_POWER_PIN
    WR(GPIO_OUTSET(TD_AUDIO_POWER_PIN), 1u << (TD_AUDIO_POWER_PIN & 31u));
    WR(GPIO_PIN_CNF(TD_AUDIO_POWER_PIN), 1u);
    delay_ms(TD_AUDIO_POWER_ON_MS);
#endif
    /* 3. pins: CLK an output driven low, DIN an input without pull (PIN_CNF 0: input,
     * buffer connected, no pull), then both selected for the PDM */
    pin_output_low(TD_AUDIO_CLK_PIN);
    WR(GPIO_PIN_CNF(TD_AUDIO_DIN_PIN), 0u);
    WR(PDM_PSEL_CLK, (uint32_t)TD_AUDIO_CLK_PIN); /* bit 31 CONNECT = 0, bit 5 port */
    WR(PDM_PSEL_DIN, (uint32_t)TD_AUDIO_DIN_PIN);
    /* 4. clock, ratio, mono, gain */
    WR(PDM_PDMCLKCTRL, PDMCLK_1280K);
    WR(PDM_RATIO, RATIO_80);
    WR(PDM_MODE, MODE_MONO);
    WR(PDM_GAINL, TD_AUDIO_GAIN);
    WR(PDM_GAINR, TD_AUDIO_GAIN);
    /* 5. the first buffer, events cleared, interrupts */
    armed = td_audio_slots_arm(&slots);
    armed_drops = 0u;
    filling = -1;
    WR(PDM_SAMPLE_PTR, slot_addr(armed));
    WR(PDM_SAMPLE_MAXCNT, block);
    WR(PDM_EVENTS_STARTED, 0u);
    WR(PDM_EVENTS_STOPPED, 0u);
    WR(PDM_EVENTS_END, 0u);
    WR(PDM_INTENSET, INT_STARTED | INT_STOPPED | INT_END);
    WR(NVIC_ISER0, 1u << PDM_IRQN);
    /* 6. enable and start */
    running = 1u;
    WR(PDM_ENABLE, 1u);
    WR(PDM_TASKS_START, 1u);
    return 0;
}

const int16_t *td_audio_take(uint32_t *block) { return td_audio_slots_take_masked(&slots, block); }

void td_audio_release(uint32_t upto) { td_audio_slots_release_masked(&slots, upto); }

uint32_t td_audio_overruns(void) { return slots.lost_samples; }

int td_audio_ended(void) { return 0; /* a microphone never ends */ }

void td_audio_wait(void)
{
    uint32_t m = td_audio_irq_off();
    if (td_audio_slots_oldest_ready(&slots) < 0)
        WFI(); /* wakes on the pending PDM interrupt even with PRIMASK set */
    td_audio_irq_restore(m);
}

void td_audio_stop(void)
{
    /* the interrupt off first, then STOP; END (the last samples in RAM) and STOPPED are
     * polled here; then the peripheral is disabled */
    WR(PDM_INTENCLR, INT_STARTED | INT_STOPPED | INT_END);
    WR(NVIC_ICER0, 1u << PDM_IRQN);
    WR(PDM_TASKS_STOP, 1u);
    while (RD(PDM_EVENTS_STOPPED) == 0u) {
    }
    WR(PDM_EVENTS_STOPPED, 0u);
    WR(PDM_EVENTS_END, 0u);
    WR(PDM_EVENTS_STARTED, 0u);
    running = 0u;
    WR(PDM_ENABLE, 0u);
#ifdef TD_AUDIO_POWER_PIN
    WR(GPIO_OUTCLR(TD_AUDIO_POWER_PIN), 1u << (TD_AUDIO_POWER_PIN & 31u)); /* microphone off */
#endif
}
