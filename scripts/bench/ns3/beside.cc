// beside: ns-3 on the scenarios atmlab's virtual-time speed benchmark runs
// (backend/virtual, BenchmarkBesideNS3), to compare simulated seconds per
// wall second on the same machine: two hosts, each on a full-duplex
// point-to-point link to a node between them that forwards (ns-3's
// fastest link model; its CSMA channel is half duplex, and a bridge needs
// it), no propagation delay, MTU 1500.
//
//   tcp100m  one TCP bulk stream, 100 Mbit/s links
//   tcp1g    one TCP bulk stream, 1 Gbit/s links
//   udp1g    a UDP flood of 1472-octet datagrams at 1 Gbit/s
//
// Usage: beside SCENARIO [SECONDS]   (default 10 simulated seconds)
// Prints one line: the wall time of Simulator::Run, simulated seconds per
// wall second and what the receiver got.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

using namespace ns3;

int main(int argc, char *argv[]) {
	if (argc < 2) {
		std::fprintf(stderr, "usage: %s tcp100m|tcp1g|udp1g [SECONDS]\n", argv[0]);
		return 2;
	}
	std::string scenario = argv[1];
	double seconds = argc > 2 ? std::atof(argv[2]) : 10.0;
	std::string rate;
	bool udp = false;
	if (scenario == "tcp100m") {
		rate = "100Mbps";
	} else if (scenario == "tcp1g") {
		rate = "1Gbps";
	} else if (scenario == "udp1g") {
		rate = "1Gbps";
		udp = true;
	} else {
		std::fprintf(stderr, "%s: unknown scenario %s (tcp100m, tcp1g, udp1g)\n", argv[0], scenario.c_str());
		return 2;
	}
	// Full-size segments (1500 - 20 - 20 - 12 of timestamps), as the
	// virtual hosts send; SACK and timestamps are ns-3's defaults.
	Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));

	NodeContainer hosts, mid;
	hosts.Create(2);
	mid.Create(1);
	PointToPointHelper p2p;
	p2p.SetDeviceAttribute("DataRate", StringValue(rate));
	p2p.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
	InternetStackHelper stack;
	stack.Install(hosts);
	stack.Install(mid);
	Ipv4AddressHelper addr;
	Ipv4InterfaceContainer ifs[2];
	for (uint32_t i = 0; i < 2; i++) {
		NetDeviceContainer link = p2p.Install(hosts.Get(i), mid.Get(0));
		std::string net = "10.0." + std::to_string(i) + ".0";
		addr.SetBase(net.c_str(), "255.255.255.0");
		ifs[i] = addr.Assign(link);
	}
	Ipv4GlobalRoutingHelper::PopulateRoutingTables();

	uint16_t port = 5001;
	Address to(InetSocketAddress(ifs[1].GetAddress(0), port));
	std::string factory = udp ? "ns3::UdpSocketFactory" : "ns3::TcpSocketFactory";
	PacketSinkHelper sinkHelper(factory, InetSocketAddress(Ipv4Address::GetAny(), port));
	ApplicationContainer sink = sinkHelper.Install(hosts.Get(1));
	ApplicationContainer src;
	if (udp) {
		OnOffHelper onoff(factory, to);
		onoff.SetConstantRate(DataRate(rate), 1472);
		src = onoff.Install(hosts.Get(0));
	} else {
		BulkSendHelper bulk(factory, to);
		bulk.SetAttribute("MaxBytes", UintegerValue(0));
		src = bulk.Install(hosts.Get(0));
	}
	sink.Start(Seconds(0));
	src.Start(Seconds(0));
	src.Stop(Seconds(seconds));
	Simulator::Stop(Seconds(seconds));

	auto t0 = std::chrono::steady_clock::now();
	Simulator::Run();
	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	uint64_t got = DynamicCast<PacketSink>(sink.Get(0))->GetTotalRx();
	Simulator::Destroy();
	std::printf("ns-3 %s: %.0f simulated s in %.2f s wall, %.4g simulated s per wall s, %.1f Mbit/s received\n",
		    scenario.c_str(), seconds, wall, seconds / wall, 8.0 * got / seconds / 1e6);
	return 0;
}
