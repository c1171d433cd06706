package broker

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/sdk/abi"
)

type channelRequestDoc struct {
	Op      string          `json:"op"`
	Text    string          `json:"text"`
	Message json.RawMessage `json:"message"`
}

type channelSentDoc struct {
	Delivered bool   `json:"delivered"`
	MessageID string `json:"message_id"`
}

func (op *operation) channel(ctx context.Context, name string) ([]byte, error) {
	reg := op.b.cfg.Channels
	var doc channelRequestDoc
	if err := decodeStrict(op.req.Request, &doc); err != nil {
		return nil, err
	}
	if doc.Op != "send" {
		return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "unknown channel op %q (send)", doc.Op)
	}
	if reg == nil {
		return nil, refuse(abi.CodeUnavailable, "unavailable", "channel %q is not configured on this host", name)
	}
	in := op.in
	id, err := reg.Send(ctx, channels.Message{
		Channel: name, SkillID: in.SkillID, ToolID: in.ToolID, InvocationID: in.ID,
		Text: doc.Text, Data: doc.Message,
	})
	switch {
	case err == nil:
	case errors.Is(err, channels.ErrNotConfigured):
		return nil, refuse(abi.CodeUnavailable, "unavailable", "channel %q is granted but not configured on this host", name)
	case errors.Is(err, channels.ErrInvalid):
		return nil, &failure{code: abi.CodeInvalidRequest, reason: "invalid_request", msg: err.Error(), cause: err}
	case errors.Is(err, channels.ErrDelivery):
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		op.log.Warn("channel delivery failed", "channel", name, "error", err)
		return nil, &failure{code: abi.CodeUpstreamFailure, reason: "upstream_failure", msg: "delivery to channel " + name + " failed", cause: err}
	default:
		return nil, err
	}
	op.in.st.add(func(s *Stats) { s.ChannelMessages++ })
	return mustJSON(channelSentDoc{Delivered: true, MessageID: id}), nil
}
