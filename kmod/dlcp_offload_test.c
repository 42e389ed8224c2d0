// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of super-packets (dlcp_offload.c): the checks a receiver
 * makes before it takes one whole, and the cut into packets that the
 * kernel's GSO asks of DLCP, natively and inside a UDP tunnel's GSO, with
 * the checksums summed by the device or in software.
 */
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/sizes.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/protocol.h>
#include <net/udp.h>
#include "dlcp_kunit.h"
#include "dlcp_impl.h"

#define OT_SEGS		5
#define OT_MSS		1000
#define OT_OFF		3000	/* offset of the first packet in its message */
#define OT_MSG		20000
/* the pseudo-header's protocol: the cut keeps the header's sum as it is */
#define OT_PROTO	253

static const __be32 ot_saddr = cpu_to_be32(0x0a000001);
static const __be32 ot_daddr = cpu_to_be32(0x0a000002);

static u8 ot_byte(u32 off)
{
	return (u8)(off * 7 + 3);
}

/*
 * A super-packet as dlcp_offload_xmit() builds it and IP's GSO hands it
 * on: the IPv4 header in front (where the MAC header starts), skb->data
 * at the DLCP header, the payload of OT_SEGS packets from OT_OFF on as
 * fragments of a message's pages (dlcp_buf_frag_skb()), from mid-page.
 */
static struct sk_buff *ot_skb(void)
{
	struct dlcp_buf b;
	struct dlcp_data_hdr *d;
	struct sk_buff *skb;
	struct iov_iter it;
	struct iphdr *iph;
	struct kvec kv;
	u8 *msg;
	u32 i;
	int err;

	msg = vmalloc(OT_MSG);
	skb = alloc_skb(MAX_HEADER + sizeof(*iph) + DLCP_DATA_HDR_LEN,
			GFP_KERNEL);
	if (!msg || !skb)
		goto fail;
	for (i = 0; i < OT_MSG; i++)
		msg[i] = ot_byte(i);
	skb_reserve(skb, MAX_HEADER);
	skb_reset_mac_header(skb);
	skb_reset_network_header(skb);
	iph = skb_put_zero(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->protocol = OT_PROTO;
	iph->saddr = ot_saddr;
	iph->daddr = ot_daddr;
	skb->protocol = htons(ETH_P_IP);
	memset(skb->cb, 0, sizeof(skb->cb));
	SKB_GSO_CB(skb)->mac_offset = skb_headroom(skb);
	__skb_pull(skb, sizeof(*iph));
	skb_reset_transport_header(skb);
	d = skb_put_zero(skb, DLCP_DATA_HDR_LEN);
	dlcp_fill_hdr(&d->common, DLCP_T_DATA, htons(1), htons(2), 7, OT_MSG,
		      DLCP_DATA_HDR_LEN + OT_MSS, 0, 0);
	d->offset = htonl(OT_OFF);
	/* the packet keeps its own references on the pages */
	dlcp_buf_init(&b, OT_MSG);
	kv.iov_base = msg;
	kv.iov_len = OT_MSG;
	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, OT_MSG);
	err = dlcp_buf_from_iter(&b, &it) ?:
	      dlcp_buf_frag_skb(&b, OT_OFF, OT_SEGS * OT_MSS, skb);
	dlcp_buf_free(&b);
	if (err)
		goto fail;
	vfree(msg);
	return skb;
fail:
	kfree_skb(skb);
	vfree(msg);
	return NULL;
}

/* ot_skb() with the GSO and checksum fields set */
static struct sk_buff *ot_super(void)
{
	struct sk_buff *skb = ot_skb();
	struct dlcp_data_hdr *d;

	if (!skb)
		return NULL;
	d = (struct dlcp_data_hdr *)skb->data;
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_headroom(skb);
	skb->csum_offset = offsetof(struct dlcp_hdr, check);
	d->common.check = ~csum_tcpudp_magic(ot_saddr, ot_daddr,
					     DLCP_DATA_HDR_LEN + OT_MSS,
					     OT_PROTO, 0);
	skb_shinfo(skb)->gso_type = SKB_GSO_FRAGLIST;
	skb_shinfo(skb)->gso_size = DLCP_DATA_HDR_LEN + OT_MSS;
	skb_shinfo(skb)->gso_segs = OT_SEGS;
	return skb;
}

/* Only a super-packet of dlcp_offload_xmit()'s making is taken whole. */
static void dlcp_offload_test_rcv_ok(struct kunit *test)
{
	struct dlcp_data_hdr *d;
	struct sk_buff *skb;
	int i;

	for (i = 0; i <= 8; i++) {
		skb = ot_super();
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, skb);
		d = (struct dlcp_data_hdr *)skb->data;
		switch (i) {
		case 1:	/* one packet is no super-packet */
			skb_shinfo(skb)->gso_segs = 1;
			break;
		case 2:	/* more packets than bytes for them */
			skb_shinfo(skb)->gso_segs = OT_SEGS + 1;
			break;
		case 3:	/* the header's length is not the packets' */
			d->common.len = htons(DLCP_DATA_HDR_LEN + OT_MSS + 4);
			break;
		case 4:	/* the last of a message goes alone */
			d->common.flags = DLCP_HF_LAST;
			break;
		case 5:	/* summed by a device: it came from outside */
			skb->ip_summed = CHECKSUM_NONE;
			break;
		case 6:	/* another kind of GSO packet */
			skb_shinfo(skb)->gso_type = SKB_GSO_TCPV4;
			break;
		case 7:	/* a header with options */
			d->common.doff++;
			break;
		case 8:	/* the first packet is in the message, the last not */
			d->offset = htonl(OT_MSG - 2 * OT_MSS);
			break;
		}
		KUNIT_EXPECT_EQ(test, dlcp_offload_rcv_ok(skb, false), i == 0);
		kfree_skb(skb);
	}
}

/* The payload of packet @i of a cut, at @off in @p, is its bytes */
static void ot_check_bytes(struct kunit *test, const struct sk_buff *p,
			   u32 off, u32 i)
{
	u8 buf[OT_MSS];
	u32 j;

	KUNIT_ASSERT_EQ(test, skb_copy_bits(p, off, buf, OT_MSS), 0);
	for (j = 0; j < OT_MSS; j++)
		if (buf[j] != ot_byte(OT_OFF + i * OT_MSS + j))
			break;
	KUNIT_EXPECT_EQ(test, j, OT_MSS);
}

/*
 * Cut with @features: OT_SEGS packets, each with its own offset, the
 * packet's length and its bytes, and a checksum that holds: summed by the
 * device (HW_CSUM, here skb_checksum_help()) or already in software.
 */
static void ot_cut(struct kunit *test, netdev_features_t features)
{
	struct sk_buff *skb = ot_super(), *segs, *p;
	u32 i = 0, t;
	__wsum sum;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, skb);
	KUNIT_ASSERT_EQ(test, skb->len, DLCP_DATA_HDR_LEN + OT_SEGS * OT_MSS);
	segs = dlcp_offload_segment(skb, features);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, segs);
	for (p = segs; p; p = p->next, i++) {
		const struct dlcp_data_hdr *d;

		t = skb_transport_offset(p);
		KUNIT_EXPECT_EQ(test, p->len - t, DLCP_DATA_HDR_LEN + OT_MSS);
		KUNIT_EXPECT_EQ(test, p->ip_summed == CHECKSUM_PARTIAL,
				!!(features & NETIF_F_HW_CSUM));
		if (p->ip_summed == CHECKSUM_PARTIAL) {
			KUNIT_EXPECT_EQ(test, skb_checksum_start_offset(p), t);
			KUNIT_EXPECT_EQ(test, skb_checksum_help(p), 0);
		}
		d = (const struct dlcp_data_hdr *)skb_transport_header(p);
		KUNIT_EXPECT_EQ(test, ntohl(d->offset), OT_OFF + i * OT_MSS);
		KUNIT_EXPECT_EQ(test, ntohs(d->common.len),
				DLCP_DATA_HDR_LEN + OT_MSS);
		sum = skb_checksum(p, t, DLCP_DATA_HDR_LEN + OT_MSS, 0);
		KUNIT_EXPECT_EQ(test, csum_tcpudp_magic(ot_saddr, ot_daddr,
							DLCP_DATA_HDR_LEN +
							OT_MSS, OT_PROTO,
							sum), 0);
		ot_check_bytes(test, p, t + DLCP_DATA_HDR_LEN, i);
	}
	KUNIT_EXPECT_EQ(test, i, OT_SEGS);
	kfree_skb_list(segs);
	kfree_skb(skb);
}

static void dlcp_offload_test_cut_device_sums(struct kunit *test)
{
	ot_cut(test, NETIF_F_SG | NETIF_F_HW_CSUM);
}

/* IP_CSUM sums TCP and UDP only: the cut sums DLCP's packets itself */
static void dlcp_offload_test_cut_software_sums(struct kunit *test)
{
	ot_cut(test, NETIF_F_SG | NETIF_F_IP_CSUM);
	ot_cut(test, NETIF_F_SG);
	ot_cut(test, 0);
}

/* A payload that is not whole packets is not cut: none would be right */
static void dlcp_offload_test_cut_whole_only(struct kunit *test)
{
	struct sk_buff *skb = ot_super(), *segs;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, skb);
	KUNIT_ASSERT_EQ(test, pskb_trim(skb, skb->len - 10), 0);
	segs = dlcp_offload_segment(skb, NETIF_F_SG | NETIF_F_HW_CSUM);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(segs), -EINVAL);
	if (!IS_ERR(segs))
		kfree_skb_list(segs);
	kfree_skb(skb);
}

/*
 * A tunnel of the path (IP in IP, GRE, a UDP tunnel) adds its GSO type to
 * the super-packet; its segmentation calls DLCP's for the packets inside,
 * which cuts them as any. A type DLCP never builds is refused.
 */
static void dlcp_offload_test_cut_in_tunnel(struct kunit *test)
{
	static const unsigned int outer[] = {
		SKB_GSO_IPXIP4, SKB_GSO_IPXIP6, SKB_GSO_GRE | SKB_GSO_GRE_CSUM,
		SKB_GSO_UDP_TUNNEL,
	};
	static const unsigned int foreign[] = {
		SKB_GSO_TCPV4, SKB_GSO_UDP_L4, SKB_GSO_DODGY,
	};
	struct sk_buff *skb, *segs, *p;
	unsigned int i, n;

	for (i = 0; i < ARRAY_SIZE(outer); i++) {
		skb = ot_super();
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, skb);
		skb_shinfo(skb)->gso_type |= outer[i];
		segs = dlcp_offload_segment(skb, NETIF_F_SG | NETIF_F_HW_CSUM);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, segs);
		for (p = segs, n = 0; p; p = p->next)
			n++;
		KUNIT_EXPECT_EQ(test, n, OT_SEGS);
		kfree_skb_list(segs);
		kfree_skb(skb);
	}
	for (i = 0; i < ARRAY_SIZE(foreign); i++) {
		skb = ot_super();
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, skb);
		skb_shinfo(skb)->gso_type |= foreign[i];
		segs = dlcp_offload_segment(skb, NETIF_F_SG | NETIF_F_HW_CSUM);
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(segs), -EINVAL);
		if (!IS_ERR(segs))
			kfree_skb_list(segs);
		kfree_skb(skb);
	}
}

/*
 * A super-packet of UDP mode as dlcp_offload_xmit() builds it and IP's GSO
 * hands it to UDP's: ot_super()'s inside a UDP header (skb->data there),
 * typed as a UDP tunnel's GSO packet whose inner headers are all the DLCP
 * header, on a device of @features
 */
static struct sk_buff *ot_udp_super(struct net_device *dev,
				    netdev_features_t features)
{
	struct sk_buff *skb = ot_super();
	struct udphdr *uh;

	if (!skb)
		return NULL;
	ip_hdr(skb)->protocol = IPPROTO_UDP;
	skb_reset_inner_mac_header(skb);
	skb_reset_inner_network_header(skb);
	skb_reset_inner_transport_header(skb);
	skb_set_inner_ipproto(skb, IPPROTO_DLCP);
	skb->encapsulation = 1;
	skb_shinfo(skb)->gso_type |= SKB_GSO_UDP_TUNNEL_CSUM;
	/* the IPv4 header moves down to make room for UDP's */
	memmove(skb->data - sizeof(struct iphdr) - sizeof(*uh),
		skb->data - sizeof(struct iphdr), sizeof(struct iphdr));
	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	skb_set_network_header(skb, -(int)sizeof(struct iphdr));
	skb_set_mac_header(skb, -(int)sizeof(struct iphdr));
	SKB_GSO_CB(skb)->mac_offset = skb_headroom(skb) -
				      sizeof(struct iphdr);
	uh->source = htons(1);
	uh->dest = htons(9);
	uh->len = htons(skb->len);
	uh->check = ~csum_tcpudp_magic(ot_saddr, ot_daddr, skb->len,
				       IPPROTO_UDP, 0);
	dev->features = features;
	dev->hw_enc_features = features;
	dev_net_set(dev, &init_net);
	skb->dev = dev;
	return skb;
}

/*
 * UDP's GSO, as IPv4's hands it a packet (udp4_ufo_fragment()): a UDP
 * tunnel's goes to skb_udp_tunnel_segment(), which not every kernel
 * exports.
 */
static struct sk_buff *ot_udp_gso(struct sk_buff *skb,
				  netdev_features_t features)
{
	struct sk_buff *segs = ERR_PTR(-EPROTONOSUPPORT);
	const struct net_offload *ops;

	rcu_read_lock();
	ops = rcu_dereference(inet_offloads[IPPROTO_UDP]);
	if (ops && ops->callbacks.gso_segment)
		segs = ops->callbacks.gso_segment(skb, features);
	rcu_read_unlock();
	return segs;
}

/*
 * Where the path cuts a super-packet of UDP mode (a NIC, tbf), the UDP
 * tunnel's GSO cuts it with DLCP's: OT_SEGS datagrams, each with its UDP
 * length, the packet's offset and bytes, the source port it would have had
 * sent alone (the device's namespace's sysctls: the skb has no socket),
 * and both checksums right, summed by the device or in software.
 */
static void ot_udp_cut(struct kunit *test, netdev_features_t features)
{
	const u32 plen = DLCP_DATA_HDR_LEN + OT_MSS;
	const u32 ulen = sizeof(struct udphdr) + plen;
	const struct dlcp_net *dn = dlcp_pernet(&init_net);
	struct sk_buff *skb, *segs, *p;
	u16 sport[OT_SEGS] = {};
	struct net_device *dev;
	u32 i = 0, t;
	__wsum sum;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, dev);
	skb = ot_udp_super(dev, features);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, skb);
	segs = ot_udp_gso(skb, features);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, segs);
	for (p = segs; p; p = p->next, i++) {
		const struct dlcp_data_hdr *d;
		const struct udphdr *uh;

		t = skb_transport_offset(p);
		KUNIT_EXPECT_EQ(test, p->len - t, ulen);
		/* it may move the headers: read them after it */
		if (p->ip_summed == CHECKSUM_PARTIAL)
			KUNIT_EXPECT_EQ(test, skb_checksum_help(p), 0);
		uh = (const struct udphdr *)skb_transport_header(p);
		KUNIT_EXPECT_EQ(test, ntohs(uh->len), ulen);
		KUNIT_EXPECT_EQ(test, ntohs(uh->source),
				dlcp_udp_sport(dn, 7, OT_OFF / OT_MSS + i));
		if (i < OT_SEGS)
			sport[i] = ntohs(uh->source);
		sum = skb_checksum(p, t, ulen, 0);
		KUNIT_EXPECT_EQ(test, csum_tcpudp_magic(ot_saddr, ot_daddr, ulen,
							IPPROTO_UDP, sum), 0);
		sum = skb_checksum(p, t + sizeof(*uh), plen, 0);
		KUNIT_EXPECT_EQ(test, csum_tcpudp_magic(ot_saddr, ot_daddr, plen,
							OT_PROTO, sum), 0);
		d = (const struct dlcp_data_hdr *)(uh + 1);
		KUNIT_EXPECT_EQ(test, ntohl(d->offset), OT_OFF + i * OT_MSS);
		ot_check_bytes(test, p, t + sizeof(*uh) + DLCP_DATA_HDR_LEN,
			       i);
	}
	KUNIT_EXPECT_EQ(test, i, OT_SEGS);
	/* a port per packet (udp_entropy 1): jhash gives these five apart */
	if (READ_ONCE(dn->udp_entropy) == 1)
		for (i = 1; i < OT_SEGS; i++)
			KUNIT_EXPECT_NE(test, sport[i], sport[i - 1]);
	kfree_skb_list(segs);
	kfree_skb(skb);
	kfree(dev);
}

static void dlcp_offload_test_udp_cut(struct kunit *test)
{
	ot_udp_cut(test, NETIF_F_SG | NETIF_F_HW_CSUM);
	ot_udp_cut(test, NETIF_F_SG | NETIF_F_IP_CSUM);
	ot_udp_cut(test, 0);
}

/*
 * The receiver takes a super-packet of UDP mode whole once past its UDP
 * header, and only as that: not one of native mode's type in UDP, nor one
 * of UDP mode's type natively
 */
static void dlcp_offload_test_udp_rcv_ok(struct kunit *test)
{
	struct net_device *dev;
	struct sk_buff *skb;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, dev);
	skb = ot_udp_super(dev, NETIF_F_SG | NETIF_F_HW_CSUM);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, skb);
	__skb_pull(skb, sizeof(struct udphdr));
	KUNIT_EXPECT_TRUE(test, dlcp_offload_rcv_ok(skb, true));
	KUNIT_EXPECT_FALSE(test, dlcp_offload_rcv_ok(skb, false));
	skb_shinfo(skb)->gso_type = SKB_GSO_FRAGLIST;
	KUNIT_EXPECT_FALSE(test, dlcp_offload_rcv_ok(skb, true));
	kfree_skb(skb);
	kfree(dev);
}

/*
 * A super-packet carries one DATA header and its packets' payload: at MTU
 * 1500 natively over IPv4, 45 packets of 1428 bytes fit in an IP packet,
 * so a 64 KiB message (46 packets) goes as one super-packet and its last
 * packet, which goes alone. With a header counted per packet it was 44,
 * and the message took three skbs.
 */
static void dlcp_offload_test_max_segs(struct kunit *test)
{
	static const struct {
		u32 mtu;
		bool v6, udp;
		u32 want;
	} c[] = {
		{ 1500, false, false, 45 },
		{ 1500, false, true, 46 },
		{ 1500, true, false, 46 },
		{ 9000, false, false, 7 },
		{ 9000, true, true, 7 },
	};
	struct in6_addr v4, v6 = { .s6_addr32 = { htonl(0x20010db8) } };
	u32 seg, n;
	unsigned int i;

	ipv6_addr_set_v4mapped(ot_daddr, &v4);
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		const struct in6_addr *daddr = c[i].v6 ? &v6 : &v4;
		u32 bytes = dlcp_gso_max_bytes(daddr);

		seg = dlcp_xmit_payload(daddr, c[i].udp, c[i].mtu);
		n = dlcp_offload_max_segs(bytes, seg);
		KUNIT_EXPECT_EQ(test, n, c[i].want);
		/* it fits, and one more would not */
		KUNIT_EXPECT_LE(test, DLCP_DATA_HDR_LEN + n * seg, bytes);
		KUNIT_EXPECT_GT(test, DLCP_DATA_HDR_LEN + (n + 1) * seg, bytes);
	}
	seg = dlcp_xmit_payload(&v4, false, 1500);
	n = dlcp_offload_max_segs(dlcp_gso_max_bytes(&v4), seg);
	KUNIT_EXPECT_EQ(test, DIV_ROUND_UP(SZ_64K, seg), n + 1);
	KUNIT_EXPECT_EQ(test, dlcp_offload_max_segs(DLCP_DATA_HDR_LEN, 1000), 0);
}

/*
 * The path entropy (UDP source port, IPv6 flow label) is keyed per
 * namespace: two namespaces give the same packet unrelated ports, so that
 * the ports a flow log records say nothing of message ids.
 */
static void dlcp_offload_test_entropy_keyed(struct kunit *test)
{
	struct dlcp_net *a, *b;
	u32 id, same = 0;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!a || !b) {
		kfree(a);
		kfree(b);
		KUNIT_ASSERT_TRUE(test, false);
	}
	a->udp_entropy = 1;
	b->udp_entropy = 1;
	get_random_bytes(&a->entropy_key, sizeof(a->entropy_key));
	get_random_bytes(&b->entropy_key, sizeof(b->entropy_key));
	for (id = 0; id < 64; id++)
		same += dlcp_entropy(a, id, 0) == dlcp_entropy(b, id, 0);
	KUNIT_EXPECT_EQ(test, same, 0);
	/* a packet keeps its entropy; the next one gets another */
	KUNIT_EXPECT_EQ(test, dlcp_entropy(a, 7, 3), dlcp_entropy(a, 7, 3));
	KUNIT_EXPECT_NE(test, dlcp_entropy(a, 7, 3), dlcp_entropy(a, 7, 4));
	kfree(a);
	kfree(b);
}

static struct kunit_case dlcp_offload_test_cases[] = {
	KUNIT_CASE(dlcp_offload_test_entropy_keyed),
	KUNIT_CASE(dlcp_offload_test_max_segs),
	KUNIT_CASE(dlcp_offload_test_rcv_ok),
	KUNIT_CASE(dlcp_offload_test_cut_device_sums),
	KUNIT_CASE(dlcp_offload_test_cut_software_sums),
	KUNIT_CASE(dlcp_offload_test_cut_whole_only),
	KUNIT_CASE(dlcp_offload_test_cut_in_tunnel),
	KUNIT_CASE(dlcp_offload_test_udp_cut),
	KUNIT_CASE(dlcp_offload_test_udp_rcv_ok),
	{}
};

struct kunit_suite dlcp_offload_test_suite = {
	.name = "dlcp_offload",
	.test_cases = dlcp_offload_test_cases,
};
