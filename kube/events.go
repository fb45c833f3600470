package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// EventReporter tells users about problems with their objects the way
// `kubectl describe` shows them: as Warning Events on the object.
// client-go's recorder aggregates repeats and rate-limits per object, so a
// broken Ingress cannot flood the API server.
type EventReporter struct {
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
}

// NewEventReporter starts a broadcaster that writes Events through client.
func NewEventReporter(ctx context.Context, client kubernetes.Interface, component string) *EventReporter {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return &EventReporter{
		broadcaster: b,
		recorder:    b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component}),
	}
}

// Warn records a Warning Event on obj.
func (r *EventReporter) Warn(obj runtime.Object, reason, message string) {
	r.recorder.Event(obj, corev1.EventTypeWarning, reason, message)
}

// Shutdown flushes and stops the broadcaster.
func (r *EventReporter) Shutdown() {
	r.broadcaster.Shutdown()
}
