package load

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
)

// A fan-out client opens its connection as Envoy does: its HTTP/2
// settings and first window update give each stream Envoy's window and
// the connection Envoy's, as the control plane reads them off the wire.
func TestLightClientAdvertisesEnvoysWindows(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	conn, err := grpc.NewClient(lis.Addr().String(), LightDialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go discoveryv3.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx) // dials

	server, err := lis.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	server.SetDeadline(time.Now().Add(30 * time.Second))
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(server, preface); err != nil || string(preface) != http2.ClientPreface {
		t.Fatalf("client preface %q: %v", preface, err)
	}
	// The server's settings let the client open its stream: its first
	// HEADERS frame ends what it says of its windows before it asks.
	fr := http2.NewFramer(server, server)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	streamWindow, connWindow := uint32(0), int64(65535) // HTTP/2's initial windows
	for headers := false; !headers; {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the client's frames: %v", err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				streamWindow, _ = f.Value(http2.SettingInitialWindowSize)
				if err := fr.WriteSettingsAck(); err != nil {
					t.Fatal(err)
				}
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				connWindow += int64(f.Increment)
			}
		case *http2.HeadersFrame:
			headers = true
		}
	}
	if streamWindow != envoyStreamWindowBytes {
		t.Errorf("stream window %d, want Envoy's %d", streamWindow, envoyStreamWindowBytes)
	}
	if connWindow != envoyConnectionWindowBytes {
		t.Errorf("connection window %d, want Envoy's %d", connWindow, envoyConnectionWindowBytes)
	}
}
