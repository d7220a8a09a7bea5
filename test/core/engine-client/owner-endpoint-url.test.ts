import { describe, expect, it } from 'vitest';
import { ownerEndpointUrl } from '../../../src/core/engine-client/url';

describe('ownerEndpointUrl (an engine address typed by the owner)', () => {
  it('takes a base URL, with or without /v1', () => {
    expect(ownerEndpointUrl('http://127.0.0.1:8000/v1/')).toBe('http://127.0.0.1:8000');
    expect(ownerEndpointUrl(' https://gpu-box.lan:8443 ')).toBe('https://gpu-box.lan:8443');
  });

  it('takes a bare HOST:PORT as http, as the CLI does', () => {
    expect(ownerEndpointUrl('127.0.0.1:18124')).toBe('http://127.0.0.1:18124');
    expect(ownerEndpointUrl('localhost:11434')).toBe('http://localhost:11434');
    expect(ownerEndpointUrl('[::1]:8080')).toBe('http://[::1]:8080');
    expect(ownerEndpointUrl('gpu-box:8000/v1')).toBe('http://gpu-box:8000');
  });

  it('refuses other schemes, credentials and things that are not addresses', () => {
    expect(() => ownerEndpointUrl('ftp://example')).toThrow(/http:\/\//);
    expect(() => ownerEndpointUrl('http://user:pw@127.0.0.1:8000')).toThrow(/user name or password/);
    expect(() => ownerEndpointUrl('not an address')).toThrow(/HOST:PORT/);
    expect(() => ownerEndpointUrl('127.0.0.1')).toThrow(/HOST:PORT/);
  });
});
