// SPDX-License-Identifier: MIT
// The 16550 register model as a guest driver sees it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

#include "tests/shim/earlytrace_shim.h"

namespace {

enum { THR = 0, IER = 1, IIR = 2, LCR = 3, MCR = 4, LSR = 5, MSR = 6, SCR = 7 };

class Serial : public ::testing::Test {
protected:
	void SetUp() override
	{
		ASSERT_EQ(pipe(fds), 0);
		serial8250_init(&uart, fds[1], on_irq, this);
	}
	void TearDown() override
	{
		serial8250_destroy(&uart);
		close(fds[0]);
		close(fds[1]);
	}
	static void on_irq(void *ctx, int level) { static_cast<Serial *>(ctx)->irq.push_back(level); }
	uint8_t rd(unsigned reg)
	{
		uint8_t v = 0;
		serial8250_io(&uart, reg, &v, 1, false);
		return v;
	}
	void wr(unsigned reg, uint8_t v) { serial8250_io(&uart, reg, &v, 1, true); }
	std::string output(size_t n)
	{
		std::string s(n, '\0');
		EXPECT_EQ(read(fds[0], &s[0], n), (ssize_t)n);
		return s;
	}

	struct serial8250 uart;
	int fds[2];
	std::vector<int> irq;
};

} // namespace

TEST_F(Serial, ResetState)
{
	EXPECT_EQ(rd(LSR), 0x60); // THRE | TEMT, no data
	EXPECT_EQ(rd(IIR), 0x01); // no interrupt pending
	EXPECT_EQ(rd(IER), 0x00);
	EXPECT_EQ(rd(MSR) & 0xb0, 0xb0); // DCD, DSR, CTS
}

TEST_F(Serial, TransmitsToTheHost)
{
	for (char c : std::string("hi\n"))
		wr(THR, (uint8_t)c);
	EXPECT_EQ(output(3), "hi\n");
	EXPECT_EQ(uart.tx_bytes, 3u);
}

TEST_F(Serial, DivisorLatchShadowsDataRegisters)
{
	wr(LCR, 0x83); // DLAB, 8N1
	wr(THR, 0x01); // DLL: 115200 baud
	wr(IER, 0x00); // DLM
	EXPECT_EQ(rd(THR), 0x01);
	EXPECT_EQ(rd(IER), 0x00);
	wr(LCR, 0x03);
	EXPECT_EQ(uart.tx_bytes, 0u); // the DLL write was not transmitted
	EXPECT_EQ(rd(LCR), 0x03);
	wr(SCR, 0xa5);
	EXPECT_EQ(rd(SCR), 0xa5);
}

TEST_F(Serial, ReceiveRaisesAndClearsTheInterrupt)
{
	wr(MCR, 0x0b); // DTR, RTS, OUT2 (the PC's interrupt gate)
	wr(IER, 0x01); // received-data interrupt
	EXPECT_TRUE(irq.empty());

	const uint8_t keys[] = { 'l', 's' };
	EXPECT_EQ(serial8250_receive(&uart, keys, 2), 2u);
	ASSERT_EQ(irq.size(), 1u);
	EXPECT_EQ(irq[0], 1);
	EXPECT_EQ(rd(LSR) & 0x01, 0x01);
	EXPECT_EQ(rd(IIR) & 0x0f, 0x04);
	EXPECT_EQ(rd(THR), 'l');
	EXPECT_EQ(rd(THR), 's');
	EXPECT_EQ(rd(LSR) & 0x01, 0x00);
	ASSERT_EQ(irq.size(), 2u);
	EXPECT_EQ(irq[1], 0);
}

TEST_F(Serial, Out2GatesTheInterruptLine)
{
	wr(MCR, 0x03); // OUT2 clear
	wr(IER, 0x01);
	const uint8_t key = 'x';
	serial8250_receive(&uart, &key, 1);
	EXPECT_TRUE(irq.empty());
	EXPECT_EQ(rd(IIR) & 0x0f, 0x04); // still pending in the UART itself
	wr(MCR, 0x0b);
	ASSERT_EQ(irq.size(), 1u);
	EXPECT_EQ(irq[0], 1);
}

TEST_F(Serial, TransmitterEmptyInterruptIsAcknowledgedByIirRead)
{
	wr(MCR, 0x08);
	wr(IER, 0x02); // THRI with an empty transmitter interrupts at once
	ASSERT_EQ(irq.size(), 1u);
	EXPECT_EQ(rd(IIR) & 0x0f, 0x02);
	EXPECT_EQ(irq.back(), 0);
	EXPECT_EQ(rd(IIR) & 0x0f, 0x01);
	wr(THR, 'a'); // sent at once, so empty again: interrupt again
	EXPECT_EQ(irq.back(), 1);
	EXPECT_EQ(output(1), "a");
}

TEST_F(Serial, FifoOverrunIsCountedNotCorrupting)
{
	std::vector<uint8_t> flood(SERIAL8250_FIFO_SIZE + 5, 'z');
	EXPECT_EQ(serial8250_receive(&uart, flood.data(), flood.size()), (unsigned)SERIAL8250_FIFO_SIZE);
	for (int i = 0; i < SERIAL8250_FIFO_SIZE; i++)
		EXPECT_EQ(rd(THR), 'z');
	EXPECT_EQ(rd(LSR) & 0x01, 0);
}

TEST_F(Serial, LoopbackEchoesTransmitAndModemLines)
{
	wr(MCR, 0x10 | 0x0f); // loop with DTR RTS OUT1 OUT2
	EXPECT_EQ(rd(MSR) & 0xf0, 0xf0);
	wr(THR, 0x42);
	EXPECT_EQ(rd(LSR) & 0x01, 0x01);
	EXPECT_EQ(rd(THR), 0x42);
	EXPECT_EQ(uart.tx_bytes, 0u);
	wr(MCR, 0x10);
	EXPECT_EQ(rd(MSR) & 0xf0, 0x00);
}

TEST_F(Serial, FifoControlEnablesAndClears)
{
	const uint8_t key = 'q';
	serial8250_receive(&uart, &key, 1);
	wr(IIR, 0x07); // enable FIFOs, clear both
	EXPECT_EQ(rd(LSR) & 0x01, 0);
	EXPECT_EQ(rd(IIR) & 0xc0, 0xc0); // "FIFOs enabled", as a 16550A reports
}
