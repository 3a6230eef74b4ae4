package langhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// engineLog is a writer that sends what is written to the engine as ephemeral log messages of one stream: how
// Pulumi's host shows the output of creating a virtualenv from GetRequiredPackages, an RPC with no output stream
// of its own (main.go:491-545 at 1b5949891b3c, createEngineWriters and logWriter).
type engineLog struct {
	ctx      context.Context
	client   pulumirpc.EngineClient
	stream   int32
	severity pulumirpc.LogSeverity
}

func (w *engineLog) Write(p []byte) (int, error) {
	if _, err := w.client.Log(w.ctx, &pulumirpc.LogRequest{
		Message: strings.ToValidUTF8(string(p), "\uFFFD"), Ephemeral: true, StreamId: w.stream, Severity: w.severity,
	}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// engineWriters connects to the engine and returns an info and an error writer for one log stream, and the
// connection to close afterwards.
func (h *Host) engineWriters(ctx context.Context) (io.Writer, io.Writer, io.Closer, error) {
	if h.engineAddress == "" {
		return nil, nil, nil, errors.New("the engine's address is unknown: the engine calls Handshake first")
	}
	conn, err := grpc.NewClient(h.engineAddress, grpc.WithTransportCredentials(insecure.NewCredentials()),
		rpcutil.GrpcChannelOptions())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("language host could not make connection to engine: %w", err)
	}
	client := pulumirpc.NewEngineClient(conn)
	stream := rand.Int31() //nolint:gosec // a stream id, not a secret
	return &engineLog{ctx, client, stream, pulumirpc.LogSeverity_INFO},
		&engineLog{ctx, client, stream, pulumirpc.LogSeverity_ERROR}, conn, nil
}
