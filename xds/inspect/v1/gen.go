// Package inspectv1 is the generated code of the Inspector service. The
// generated files are committed so that building never needs protoc; run
// `go generate` here after changing inspector.proto (protoc 3.21+ with
// protoc-gen-go and protoc-gen-go-grpc on $PATH).
package inspectv1

//go:generate protoc -I../../.. --go_out=../../.. --go_opt=paths=source_relative --go-grpc_out=../../.. --go-grpc_opt=paths=source_relative xds/inspect/v1/inspector.proto
