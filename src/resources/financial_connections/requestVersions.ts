import { invalidRequest, parametersExclusive } from '../../kernel/errors';
import { formEntries, type ParamNames, type Params, type RequestChange } from '../../kernel/requestVersions';

// The parameters Financial Connections' operations took at older versions, mapped onto today's.

/**
 * Before 2026-09-30.endive a session's country filter was `filters[countries]`, a list of which the
 * public API used only the first element; now `filters[country]`, one code.
 */
function countryOfCountries(params: Params, names: ParamNames): Params {
  const filters = params.filters;
  if (typeof filters !== 'object' || filters === null || filters.countries === undefined) return params;
  if (filters.country !== undefined) throw parametersExclusive('filters[countries]', 'filters[country]');
  const { countries, ...rest } = filters;
  const [first] = formEntries(countries);
  if (first === undefined) throw invalidRequest('Invalid array for filters[countries]: send it as filters[countries][]=… or filters[countries][0]=…', 'parameter_invalid', 'filters[countries]');
  names.rename('filters[country]', 'filters[countries]');
  return { ...params, filters: { ...rest, country: first[1] } };
}

export const requestChanges: readonly RequestChange[] = [
  {
    version: '2026-09-30.endive',
    operation: 'PostFinancialConnectionsSessions',
    description: 'Renames the `filters[countries]` filter (a list, of which only the first element counted) to `filters[country]` (one code).',
    // Its first element becomes `filters[country]`, which today's schema validates (named `filters[countries]`).
    takes: { filters: { anyOf: [{ type: 'object', properties: { countries: {}, country: {} } }, { type: 'string' }] } },
    upgrade: countryOfCountries,
    replaced: { 'filters[countries]': '`filters[country]` (one country code)' },
  },
];
