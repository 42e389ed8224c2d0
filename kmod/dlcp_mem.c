// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP memory accounting: receive memory, and the protocol's share of
 * send memory.
 *
 * Everything a socket holds for incoming messages is charged to it: the
 * pages of the data, the message state, its range array and the xarray
 * nodes that index its pages, the state kept of a delivered message (a
 * zombie) and a delivery waiting for recvmsg(). Two limits apply, as for
 * UDP:
 *  - per socket, in bytes: sk_rmem_alloc, at most max(SO_RCVBUF,
 *    net.dlcp.rmem);
 *  - for the protocol, in pages: dlcp_memory_allocated, at most the third
 *    value of net.dlcp.mem (the first two: below the first no socket is
 *    limited, above the second the protocol is under pressure and a
 *    socket gets at most its share of the third, at least a minimum),
 *    charged through the socket's sk_forward_alloc by the core
 *    (__sk_mem_schedule()), which also charges the socket's memory
 *    cgroup: the GFP_ATOMIC pages of the receive path do not escape it.
 *
 * A caller schedules what an operation may need before it allocates
 * (dlcp_mem_schedule()), then charges what it took (dlcp_mem_charge()).
 * sk_forward_alloc is protected by dlcp_sock.lock (asserted: lockdep);
 * sk_rmem_alloc is atomic, read without it.
 *
 * The pages of outgoing messages count in the protocol's pages too, from
 * sendmsg() until the message is freed, and sendmsg() fails with ENOBUFS
 * at the hard limit, or under pressure for a socket holding more than its
 * share of it (dlcp_mem_charge_snd()); the per-socket limit for
 * them is max(SO_SNDBUF, net.dlcp.wmem) (dlcp_sock.c), and the pages are
 * charged to the memory cgroup as they are allocated (GFP_KERNEL_ACCOUNT).
 */
#include <linux/mm.h>
#include <linux/percpu_counter.h>
#include <linux/swap.h>
#include <net/sock.h>
#include "dlcp_impl.h"

atomic_long_t dlcp_memory_allocated;
DEFINE_PER_CPU(int, dlcp_memory_per_cpu_fw_alloc);

/* net.dlcp.mem: pages; min, pressure, max */
long dlcp_sysctl_mem[3];

/* What a socket may hold under pressure (bytes; only [0] is read) */
int dlcp_sysctl_rmem[3] = { 4 * PAGE_SIZE, 0, 0 };

/*
 * Set while the protocol's pages are above the second value of
 * net.dlcp.mem (the core clears it below the first): a socket may then
 * still take memory up to its share of the third value (the core's
 * __sk_mem_raise_allocated(), with the protocol's socket count). Without
 * it every socket holding more than its minimum would be refused memory
 * as soon as the first value is passed.
 */
unsigned long dlcp_memory_pressure;
struct percpu_counter dlcp_sockets_allocated;

void dlcp_enter_memory_pressure(struct sock *sk)
{
	WRITE_ONCE(dlcp_memory_pressure, 1);
}

/*
 * The defaults of net.dlcp.mem, from the memory of the machine, as
 * udp_mem, and the count of the protocol's sockets.
 */
int dlcp_mem_init(void)
{
	unsigned long limit = max(nr_free_buffer_pages() / 8, 128UL);

	dlcp_sysctl_mem[0] = limit / 4 * 3;
	dlcp_sysctl_mem[1] = limit;
	dlcp_sysctl_mem[2] = limit * 2;
	return percpu_counter_init(&dlcp_sockets_allocated, 0, GFP_KERNEL);
}

/*
 * Every socket is gone (each held a module reference): whatever the
 * protocol counted in its pages, in dlcp_memory_allocated and in the
 * per-CPU reserves the core keeps in front of it, must have come back. A
 * remainder is an accounting leak, which while loaded would have lowered
 * net.dlcp.mem for good.
 */
void dlcp_mem_exit(void)
{
	long pages = atomic_long_read(&dlcp_memory_allocated);
	int cpu;

	for_each_possible_cpu(cpu)
		pages += per_cpu(dlcp_memory_per_cpu_fw_alloc, cpu);
	WARN(pages, "dlcp: %ld pages still counted at unload\n", pages);
	percpu_counter_destroy(&dlcp_sockets_allocated);
}

/*
 * Make sure @sk may charge @bytes more: within its own limit, and with
 * that much forward allocated from the protocol's pages and its memory
 * cgroup. Returns 0, or the drop reason: DLCP_MIB_DROP_RCVMEM (the
 * socket's limit), DLCP_MIB_DROP_PROTOMEM (net.dlcp.mem or the cgroup).
 */
enum dlcp_mib_field dlcp_mem_schedule(struct sock *sk, u32 bytes)
	__must_hold(&dlcp_sk(sk)->lock)
{
	int delta;

	lockdep_assert_held(&dlcp_sk(sk)->lock);
	if ((u64)atomic_read(&sk->sk_rmem_alloc) + bytes > dlcp_rcvbuf_limit(sk))
		return DLCP_MIB_DROP_RCVMEM;
	delta = bytes - sk->sk_forward_alloc;
	if (delta > 0 && !__sk_mem_schedule(sk, delta, SK_MEM_RECV))
		return DLCP_MIB_DROP_PROTOMEM;
	return 0;
}

/* Charge @bytes that dlcp_mem_schedule() made room for. */
void dlcp_mem_charge(struct sock *sk, u32 bytes)
	__must_hold(&dlcp_sk(sk)->lock)
{
	lockdep_assert_held(&dlcp_sk(sk)->lock);
	WARN_ON_ONCE(bytes > sk->sk_forward_alloc);
	sk_mem_charge(sk, bytes);
	atomic_add(bytes, &sk->sk_rmem_alloc);
}

static void dlcp_mem_errq_free(struct sk_buff *skb)
{
	atomic_sub(skb->truesize, &skb->sk->sk_rmem_alloc);
}

/*
 * Make @sk own @skb, a completion for its error queue: counted in
 * sk_rmem_alloc (there are at most DLCP_MAX_COMPLETIONS) but not charged
 * to sk_forward_alloc as skb_set_owner_r() would, since recvmsg() frees
 * it without dlcp_sock.lock.
 */
void dlcp_mem_errq_owner(struct sk_buff *skb, struct sock *sk)
{
	skb_orphan(skb);
	skb->sk = sk;
	skb->destructor = dlcp_mem_errq_free;
	atomic_add(skb->truesize, &sk->sk_rmem_alloc);
}

/* Give back @bytes; whole pages beyond the first go back to the protocol. */
void dlcp_mem_uncharge(struct sock *sk, u32 bytes)
	__must_hold(&dlcp_sk(sk)->lock)
{
	lockdep_assert_held(&dlcp_sk(sk)->lock);
	atomic_sub(bytes, &sk->sk_rmem_alloc);
	sk_mem_uncharge(sk, bytes);
}

/*
 * Count the @bytes of an outgoing message of @sk, already reserved in
 * dlcp_sock.snd_mem (as its pages: dlcp_snd_cost()), in the protocol's
 * pages; false, counting nothing, if
 * that would pass the hard limit of net.dlcp.mem, or if the protocol is
 * under pressure (above the second value) and @sk holds more than its
 * share of the hard limit (send and receive memory; the limit divided by
 * the number of sockets and one), as the core limits
 * receive memory (__sk_mem_raise_allocated()). Without the share, one
 * socket whose receiver keeps its messages alive (answering, never
 * finishing them) fills the protocol's pages up to its own limit, and
 * every other socket's sendmsg() fails. A socket that holds nothing else
 * may always send one message below the hard limit.
 */
bool dlcp_mem_charge_snd(struct sock *sk, u32 bytes)
{
	long pages = DIV_ROUND_UP(bytes, PAGE_SIZE);
	long allocated = atomic_long_add_return(pages, &dlcp_memory_allocated);
	u64 held = READ_ONCE(dlcp_sk(sk)->snd_mem);

	if (allocated > sk_prot_mem_limits(sk, 2))
		goto refuse;
	if (allocated > sk_prot_mem_limits(sk, 1)) {
		dlcp_enter_memory_pressure(sk);
		/*
		 * The share is the hard limit divided by the sockets, and
		 * one more: a socket alone must leave room for the next
		 * one, which may hold nothing yet. The socket count is
		 * summed: its quick read lags by up to a batch of 32 a CPU,
		 * and would find a few sockets to be none.
		 */
		if (held > dlcp_snd_cost(bytes) &&
		    DIV_ROUND_UP(held + atomic_read(&sk->sk_rmem_alloc),
				 PAGE_SIZE) *
		    (percpu_counter_sum_positive(&dlcp_sockets_allocated) + 1) >
		    sk_prot_mem_limits(sk, 2))
			goto refuse;
	}
	return true;

refuse:
	atomic_long_sub(pages, &dlcp_memory_allocated);
	DLCP_INC_STATS(sock_net(sk), DLCP_MIB_OUT_PROTOMEM);
	return false;
}

/* Return what dlcp_mem_charge_snd() counted for @bytes. */
void dlcp_mem_uncharge_snd(struct sock *sk, u32 bytes)
{
	atomic_long_sub(DIV_ROUND_UP(bytes, PAGE_SIZE), &dlcp_memory_allocated);
}
