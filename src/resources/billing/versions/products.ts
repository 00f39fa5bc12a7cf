import type { VersionChange } from '../../../kernel/versions';
import { has, without, withDefaults } from './shared';

// Products.

export const productChanges: readonly VersionChange[] = [
  {
    version: '2024-04-10',
    object: 'product',
    description: 'Renames the `features` attribute of products to `marketing_features`.',
    downgrade: (product) => {
      if (!has(product, 'marketing_features')) return product;
      return { ...without(product, ['marketing_features']), features: product.marketing_features };
    },
  },
  {
    version: '2023-08-16',
    object: 'product',
    description:
      'Removes `attributes`, `caption` and `deactivate_on` from products (fields of goods, for the legacy Orders and SKUs, which ' +
      'stripe-node dropped with this version; the changelog has no entry). Products here are services: `attributes` and ' +
      '`deactivate_on` empty, `caption` null, as the API showed a service.',
    downgrade: (product) => withDefaults(product, { attributes: [], caption: null, deactivate_on: [] }),
  },
];
