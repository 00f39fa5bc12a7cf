import { ApiError } from '../../src/kernel/errors';
import { RouteTable } from '../../src/kernel/routeTable';

const table = new RouteTable<string>();
table.add('get', '/v1/apps/secrets/{id}', 'secret by id');
table.add('get', '/v1/apps/secrets/find', 'find');
table.add('get', '/v1/customers', 'list');
table.add('post', '/v1/customers', 'create');
table.add('get', '/v1/customers/{customer}', 'retrieve');
table.add('get', '/v1/customers/{customer}/sources/{id}', 'source');
table.add('post', '/v1/customers/{customer}', 'update');
// Added after the retrieve, as an area may declare it.
table.add('get', '/v1/customers/search', 'search');

describe('RouteTable', () => {
  test('finds an operation by method and path, with its parameters', () => {
    expect(table.match('GET', '/v1/customers')).toEqual({ value: 'list', params: {} });
    expect(table.match('POST', '/v1/customers')).toEqual({ value: 'create', params: {} });
    expect(table.match('GET', '/v1/customers/cus_1')).toEqual({ value: 'retrieve', params: { customer: 'cus_1' } });
    expect(table.match('GET', '/v1/customers/cus_1/sources/card_2')).toEqual({ value: 'source', params: { customer: 'cus_1', id: 'card_2' } });
  });

  test('static segments win over parameters, whatever the order they were added in', () => {
    expect(table.match('GET', '/v1/apps/secrets/find')?.value).toBe('find');
    expect(table.match('GET', '/v1/apps/secrets/appsecret_1')?.value).toBe('secret by id');
  });

  test('a segment an operation owns is never read as an id, by any method or deeper path', () => {
    expect(table.match('GET', '/v1/customers/search')).toEqual({ value: 'search', params: {} });
    expect(table.match('POST', '/v1/customers/search')).toBeUndefined();
    expect(table.match('GET', '/v1/customers/search/sources/card_1')).toBeUndefined();
    // Only at that place: elsewhere it is an ordinary parameter value.
    expect(table.match('GET', '/v1/customers/cus_1/sources/search')?.params).toEqual({ customer: 'cus_1', id: 'search' });
    expect(table.match('GET', '/v1/apps/secrets/search')?.params).toEqual({ id: 'search' });
    expect(table.match('POST', '/v1/customers/cus_1')?.value).toBe('update');
  });

  test('HEAD finds the GET operation; other methods, paths and shapes find nothing', () => {
    expect(table.match('HEAD', '/v1/customers')?.value).toBe('list');
    expect(table.match('DELETE', '/v1/customers')).toBeUndefined();
    expect(table.match('PUT', '/v1/customers')).toBeUndefined();
    expect(table.match('GET', '/v1/Customers')).toBeUndefined();
    expect(table.match('GET', '/v1/customers/')).toBeUndefined();
    expect(table.match('GET', '/v1/customers/cus_1/')).toBeUndefined();
    expect(table.match('GET', '/v1/customers//sources/x')).toBeUndefined();
    expect(table.match('GET', 'v1/customers')).toBeUndefined();
    expect(table.match('GET', '/v1/customers/cus_1/sources')).toBeUndefined();
  });

  test('parameters are percent-decoded as Express decodes them; bad encoding is a 400', () => {
    expect(table.match('GET', '/v1/customers/a%2Fb%20c')?.params).toEqual({ customer: 'a/b c' });
    expect(() => table.match('GET', '/v1/customers/%E0%A4%A')).toThrow(ApiError);
    // Static segments are compared as sent, undecoded, as Express compares them.
    expect(table.match('GET', '/v1/cust%6Fmers')).toBeUndefined();
  });
});
