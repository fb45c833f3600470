package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// An h2Stream is one gRPC call on a connection of its own, spoken over
// HTTP/2 by the load command itself (serve's gRPC server on the other
// side), for the fan-out's clients under -fanout-h2.
//
// Why not gRPC's client: it hands a message over only once all of it has
// arrived, so a client holds each response whole while it comes in. A
// real Envoy does too, on a node of its own; 2,000 clients on this one
// machine, each sent the route configuration at 10,000 Ingresses at once
// in a reconnect storm, hold them all together, and the load command
// outgrew the machine before the control plane did. An h2Stream hands
// the response's bytes to recv as they come off the connection, which
// decodes them as LightCodec does (decodeLight) without keeping the
// resources: a client holds a frame, not a response. What it reads
// stays paced as gRPC's was: it advertises Envoy's windows
// (LightDialOptions) and gives them back as it reads.
type h2Stream struct {
	conn net.Conn
	fr   *http2.Framer
	body *bufio.Reader  // the response's messages, as recv reads them
	pw   *io.PipeWriter // the reader's side: DATA frames' payloads

	wmu sync.Mutex // one frame written at a time

	mu   sync.Mutex
	cond *sync.Cond // the send windows grew, a message was queued, or the stream ended
	// What the server lets us send: the connection's window, the
	// stream's, and the largest frame.
	connWindow, streamWindow int64
	initialWindow            int64 // the server's SETTINGS_INITIAL_WINDOW_SIZE
	maxFrame                 int
	queue                    [][]byte // encoded messages not yet all sent
	err                      error    // why the stream ended; set once
	// What has been read of the response and not yet given back.
	unackedConn, unackedStream int64
	stop                       func() bool   // ends the context's hold on the stream
	done                       chan struct{} // closed when the stream ends
	// after is time.After but in tests: the keepalive waits on it.
	after func(time.Duration) <-chan time.Time
}

// HTTP/2's windows and largest frame before either side's SETTINGS say
// otherwise (RFC 9113, 6.5.2).
const (
	h2DefaultWindow   = 65535
	h2DefaultMaxFrame = 16384
	h2StreamID        = 1
)

// Envoy's keepalive on its xDS connection, as xds/bootstrap.go sets it:
// a PING every 30 s, plus Envoy's default jitter of up to 15%. The
// control plane pings a connection it has read nothing from for 30 s
// and drops it if nothing comes within 10 s; a fan-out client reading a
// response slowly (thousands of them on two cores) reaches that PING
// only once it has read the data sent before it, while its own PING
// goes out at once and, read, keeps the connection.
const (
	envoyKeepalive       = 30 * time.Second
	envoyKeepaliveJitter = envoyKeepalive * 15 / 100
)

// dialH2 opens the call method ("/package.Service/Method") of the gRPC
// server at address: the client preface, Envoy's windows, and the
// request's headers; messages follow with send.
func dialH2(ctx context.Context, address, method string) (*h2Stream, error) {
	return openH2(ctx, address, method, time.After)
}

// openH2 is dialH2 with the keepalive waiting on after.
func openH2(ctx context.Context, address, method string, after func(time.Duration) <-chan time.Time) (*h2Stream, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", address, err)
	}
	pr, pw := io.Pipe()
	s := &h2Stream{
		conn: conn, fr: http2.NewFramer(conn, bufio.NewReaderSize(conn, 32<<10)),
		body: bufio.NewReaderSize(pr, 32<<10), pw: pw,
		connWindow: h2DefaultWindow, streamWindow: h2DefaultWindow,
		initialWindow: h2DefaultWindow, maxFrame: h2DefaultMaxFrame,
		done: make(chan struct{}), after: after,
	}
	s.cond = sync.NewCond(&s.mu)
	s.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := s.open(address, method); err != nil {
		conn.Close()
		return nil, fmt.Errorf("opening %s on %s: %w", method, address, err)
	}
	stop := context.AfterFunc(ctx, func() { s.fail(ctx.Err()) })
	s.mu.Lock()
	s.stop = stop
	s.mu.Unlock()
	go s.readLoop()
	go s.writeLoop()
	go s.keepalive()
	return s, nil
}

// open writes the client's preface, its settings (Envoy's stream window),
// the connection's window grown to Envoy's, and the call's headers.
func (s *h2Stream) open(address, method string) error {
	if _, err := io.WriteString(s.conn, http2.ClientPreface); err != nil {
		return err
	}
	if err := s.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: envoyStreamWindowBytes},
	); err != nil {
		return err
	}
	if err := s.fr.WriteWindowUpdate(0, envoyConnectionWindowBytes-h2DefaultWindow); err != nil {
		return err
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range []hpack.HeaderField{
		{Name: ":method", Value: "POST"},
		{Name: ":scheme", Value: "http"},
		{Name: ":path", Value: method},
		{Name: ":authority", Value: address},
		{Name: "content-type", Value: "application/grpc"},
		{Name: "te", Value: "trailers"},
	} {
		if err := enc.WriteField(f); err != nil {
			return err
		}
	}
	return s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: h2StreamID, BlockFragment: block.Bytes(), EndHeaders: true})
}

// send queues m, encoded as a gRPC message, and tail after it as more of
// its encoding (fields encoded already; nil for none), for the writer,
// which sends them as the server's windows allow: it never waits on the
// server, which may be waiting for the client to read. tail is sent as it
// is, never copied: the caller must not modify it.
func (s *h2Stream) send(m proto.Message, tail []byte) error {
	msg, err := proto.MarshalOptions{}.MarshalAppend(make([]byte, 5, 5+proto.Size(m)), m)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(msg[1:], uint32(len(msg)-5+len(tail)))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.queue = append(s.queue, msg)
	if len(tail) > 0 {
		s.queue = append(s.queue, tail)
	}
	s.cond.Broadcast()
	return nil
}

// recv reads the next message of the response into v, decoding it as
// LightCodec does; it returns why the stream ended once it has (io.EOF for
// gRPC's OK).
func (s *h2Stream) recv(v proto.Message) error {
	var prefix [5]byte
	if _, err := io.ReadFull(s.body, prefix[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("a message's prefix: %w", err)
		}
		return err
	}
	if prefix[0] != 0 {
		err := errors.New("a compressed message: not asked for")
		s.fail(err)
		return err
	}
	if err := decodeLight(s.body, int(binary.BigEndian.Uint32(prefix[1:])), v); err != nil {
		s.fail(err)
		return err
	}
	return nil
}

// close ends the stream and its connection.
func (s *h2Stream) close() { s.fail(errors.New("closed")) }

// fail ends the stream with err, the first time: recv returns it once
// it has read what came before, send returns it, and the loops end.
func (s *h2Stream) fail(err error) {
	s.mu.Lock()
	first, stop := s.err == nil, s.stop
	if first {
		s.err = err
		s.cond.Broadcast()
	}
	s.mu.Unlock()
	if first {
		close(s.done)
		s.pw.CloseWithError(err)
		s.conn.Close()
		if stop != nil {
			stop()
		}
	}
}

// readLoop reads the server's frames: settings and pings are answered,
// window updates let the writer go on, the response's DATA goes to recv
// through the pipe (each frame's payload handed over before the next is
// read, since the framer reuses it), and its trailers end the stream.
func (s *h2Stream) readLoop() {
	for {
		f, err := s.fr.ReadFrame()
		if err != nil {
			s.fail(fmt.Errorf("reading a frame: %w", err))
			return
		}
		if err := s.handle(f); err != nil {
			s.fail(err)
			return
		}
	}
}

func (s *h2Stream) handle(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		if err := f.ForeachSetting(s.setting); err != nil {
			return err
		}
		return s.write(func() error { return s.fr.WriteSettingsAck() })
	case *http2.PingFrame:
		if f.IsAck() {
			return nil
		}
		return s.write(func() error { return s.fr.WritePing(true, f.Data) })
	case *http2.WindowUpdateFrame:
		s.mu.Lock()
		if f.StreamID == 0 {
			s.connWindow += int64(f.Increment)
		} else if f.StreamID == h2StreamID {
			s.streamWindow += int64(f.Increment)
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		return nil
	case *http2.DataFrame:
		if f.StreamID != h2StreamID {
			return fmt.Errorf("DATA on stream %d, which the client never opened", f.StreamID)
		}
		if _, err := s.pw.Write(f.Data()); err != nil {
			return err
		}
		if err := s.consumed(int64(f.Header().Length)); err != nil {
			return err
		}
		if f.StreamEnded() {
			return errors.New("the response ended without its trailers")
		}
		return nil
	case *http2.MetaHeadersFrame:
		if f.StreamEnded() {
			return trailersError(f)
		}
		if status := f.PseudoValue("status"); status != "200" {
			return fmt.Errorf("HTTP status %s", status)
		}
		return nil
	case *http2.RSTStreamFrame:
		return fmt.Errorf("the stream was reset: %v", f.ErrCode)
	case *http2.GoAwayFrame:
		// A GOAWAY that spares the stream (a connection aged out)
		// lets it run to its end; the server ends it.
		if f.LastStreamID < h2StreamID {
			return fmt.Errorf("GOAWAY: %v", f.ErrCode)
		}
		return nil
	}
	return nil
}

// setting applies one of the server's settings: a new initial window
// changes the open stream's window by as much (RFC 9113, 6.9.2).
func (s *h2Stream) setting(st http2.Setting) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st.ID {
	case http2.SettingInitialWindowSize:
		s.streamWindow += int64(st.Val) - s.initialWindow
		s.initialWindow = int64(st.Val)
	case http2.SettingMaxFrameSize:
		s.maxFrame = int(st.Val)
	}
	s.cond.Broadcast()
	return nil
}

// consumed gives back the window of n bytes read, once half a window has
// been read, as nghttp2 (and so Envoy) does.
func (s *h2Stream) consumed(n int64) error {
	s.unackedConn += n
	s.unackedStream += n
	var conn, stream uint32
	if s.unackedConn >= envoyConnectionWindowBytes/2 {
		conn, s.unackedConn = uint32(s.unackedConn), 0
	}
	if s.unackedStream >= envoyStreamWindowBytes/2 {
		stream, s.unackedStream = uint32(s.unackedStream), 0
	}
	if conn == 0 && stream == 0 {
		return nil
	}
	return s.write(func() error {
		if conn > 0 {
			if err := s.fr.WriteWindowUpdate(0, conn); err != nil {
				return err
			}
		}
		if stream > 0 {
			return s.fr.WriteWindowUpdate(h2StreamID, stream)
		}
		return nil
	})
}

// trailersError is the stream's end as its trailers tell it: io.EOF for
// gRPC's OK, else its status and message.
func trailersError(f *http2.MetaHeadersFrame) error {
	var code, message string
	for _, hf := range f.RegularFields() {
		switch hf.Name {
		case "grpc-status":
			code = hf.Value
		case "grpc-message":
			message = hf.Value
		}
	}
	if code == "0" {
		return io.EOF
	}
	if code == "" {
		return fmt.Errorf("the call ended without a grpc-status (HTTP status %q)", f.PseudoValue("status"))
	}
	return fmt.Errorf("the call ended: grpc-status %s: %s", code, message)
}

// writeLoop sends the queued messages as DATA frames, each no larger than
// the server's largest frame and its windows allow.
func (s *h2Stream) writeLoop() {
	for {
		s.mu.Lock()
		for s.err == nil && (len(s.queue) == 0 || s.connWindow <= 0 || s.streamWindow <= 0) {
			s.cond.Wait()
		}
		if s.err != nil {
			s.mu.Unlock()
			return
		}
		msg := s.queue[0]
		n := int(min(int64(len(msg)), s.connWindow, s.streamWindow, int64(s.maxFrame)))
		chunk := msg[:n]
		if n == len(msg) {
			s.queue = s.queue[1:]
		} else {
			s.queue[0] = msg[n:]
		}
		s.connWindow -= int64(n)
		s.streamWindow -= int64(n)
		s.mu.Unlock()
		if err := s.write(func() error { return s.fr.WriteData(h2StreamID, false, chunk) }); err != nil {
			s.fail(fmt.Errorf("sending: %w", err))
			return
		}
	}
}

// keepalive sends a PING as Envoy does, until the stream ends. The
// server's answer is not awaited: it comes after whatever the server had
// queued, which a slow client reads late; Envoy, reading on a node of
// its own, would not be late.
func (s *h2Stream) keepalive() {
	for {
		select {
		case <-s.done:
			return
		case <-s.after(envoyKeepalive + rand.N(envoyKeepaliveJitter)):
		}
		if err := s.write(func() error { return s.fr.WritePing(false, [8]byte{}) }); err != nil {
			s.fail(fmt.Errorf("sending a keepalive PING: %w", err))
			return
		}
	}
}

// write writes frames, one writer at a time: the framer is not safe for
// two.
func (s *h2Stream) write(fn func() error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return fn()
}

// h2SotW and h2Delta are an h2Stream as the ADS calls' streams.
type (
	h2SotW  struct{ s *h2Stream }
	h2Delta struct{ s *h2Stream }
)

// Send sends r. The load assignments' names a SotW fan-out client keeps
// encoded (sotwRequest puts them in r's unknown fields) are sent from
// where they lie, not copied into each request: at 10,000 Ingresses
// they are 2.7 MB, and 2,000 clients' acknowledgements waiting for the
// control plane to read them held a copy each.
func (a h2SotW) Send(r *discoveryv3.DiscoveryRequest) error {
	m := r.ProtoReflect()
	names := m.GetUnknown()
	m.SetUnknown(nil)
	defer m.SetUnknown(names)
	return a.s.send(r, names)
}

func (a h2SotW) Recv() (*discoveryv3.DiscoveryResponse, error) {
	r := &discoveryv3.DiscoveryResponse{}
	if err := a.s.recv(r); err != nil {
		return nil, err
	}
	return r, nil
}

func (a h2Delta) Send(r *discoveryv3.DeltaDiscoveryRequest) error { return a.s.send(r, nil) }

func (a h2Delta) Recv() (*discoveryv3.DeltaDiscoveryResponse, error) {
	r := &discoveryv3.DeltaDiscoveryResponse{}
	if err := a.s.recv(r); err != nil {
		return nil, err
	}
	return r, nil
}
