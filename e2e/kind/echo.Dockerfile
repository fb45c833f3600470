# syntax=docker/dockerfile:1
# The echo backend of the end-to-end tests, for kind. Build from the
# repository root: docker build -f e2e/kind/echo.Dockerfile -t ingress-xds-echo:dev .
FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags "-s -w" -o /out/echo ./e2e/cmd/echo

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/echo /echo
USER 65532:65532
ENTRYPOINT ["/echo"]
